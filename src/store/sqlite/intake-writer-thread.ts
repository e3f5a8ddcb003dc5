/**
 * The intake writer thread: owns the connection that writes new work items, so the fsync of
 * each group commit blocks this thread, never the event loop that serves HTTP.
 *
 * The event loop posts the adds of each of its ticks as one message `{ id, jobs }`. When a
 * message arrives, this thread also takes every message that queued up meanwhile (while it was
 * committing), and writes them all in one transaction: that is the group commit. It answers
 * `{ parts: [{ id, results }], commitMs }` after the commit, or `{ ids, failed }` when nothing
 * of the group was stored. It never waits for the event loop between two commits.
 */
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { createIntake, itemsOf, type IntakeBulkJob, type IntakeJob } from "./intake-sql.ts";
import { applyConnectionPragmas } from "./pragmas.ts";

/**
 * Items per transaction at most; what is left waits for the next one. A message is never split,
 * so a bulk add of up to 1,000 items is one transaction, with whatever came before it.
 */
const MAX_GROUP = 1000;

type Message = { id: number; jobs: Array<IntakeJob | IntakeBulkJob> } | { close: true };

const itemsIn = (jobs: Array<IntakeJob | IntakeBulkJob>) => jobs.reduce((sum, job) => sum + itemsOf(job), 0);

const port = parentPort!;
const db = new Database((workerData as { path: string }).path);
const addGroup = (() => {
  try {
    applyConnectionPragmas(db);
    return createIntake(db);
  } catch (error) {
    // Closed before the thread ends with the error, rather than leaving the connection and its
    // statements to the garbage collector of an ending thread.
    db.close();
    throw error;
  }
})();

function shutdown(): void {
  db.close();
  port.close();
}

port.on("message", (first: Message) => {
  if ("close" in first) return shutdown();
  const parts = [first];
  let size = itemsIn(first.jobs);
  let closing = false;
  while (size < MAX_GROUP) {
    const next = receiveMessageOnPort(port) as { message: Message } | undefined;
    if (!next) break;
    if ("close" in next.message) {
      closing = true;
      break;
    }
    parts.push(next.message);
    size += itemsIn(next.message.jobs);
  }
  const jobs = parts.length === 1 ? first.jobs : parts.flatMap((part) => part.jobs);
  const started = performance.now();
  try {
    const results = addGroup(jobs);
    let offset = 0;
    port.postMessage({
      parts: parts.map((part) => ({ id: part.id, results: results.slice(offset, (offset += part.jobs.length)) })),
      commitMs: performance.now() - started,
      size,
    });
  } catch (error) {
    const cause = (error as Error).cause as { message?: string; code?: string } | undefined;
    port.postMessage({ ids: parts.map((part) => part.id), failed: { message: cause?.message ?? (error as Error).message, code: cause?.code } });
  }
  if (closing) shutdown();
});
