/**
 * The intake writer thread: owns the connection that writes new work items, so the fsync of
 * each group commit blocks this thread, never the event loop that serves HTTP.
 * Protocol: receives `{ id, jobs }`, answers `{ id, results }` after the commit, or
 * `{ id, failed }` when nothing of the group was stored.
 */
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { createIntake, type IntakeJob } from "./intake-sql.ts";
import { applyConnectionPragmas } from "./pragmas.ts";

const port = parentPort!;
const db = new Database((workerData as { path: string }).path);
applyConnectionPragmas(db);
const addGroup = createIntake(db);

port.on("message", (message: { id: number; jobs: IntakeJob[] } | { close: true }) => {
  if ("close" in message) {
    db.close();
    port.close();
    return;
  }
  try {
    port.postMessage({ id: message.id, results: addGroup(message.jobs) });
  } catch (error) {
    const cause = (error as Error).cause as { message?: string; code?: string } | undefined;
    port.postMessage({ id: message.id, failed: { message: cause?.message ?? (error as Error).message, code: cause?.code } });
  }
});
