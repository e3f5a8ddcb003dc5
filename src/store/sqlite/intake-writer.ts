/**
 * Group commit for the embedded store, on a writer thread.
 *
 * Adds queue up on the event loop. While the writer thread commits one group (and waits for its
 * fsync), the next requests keep being parsed, validated and queued; when the commit is done,
 * everything queued meanwhile goes out as the next group. So under load one fsync serves many
 * requests, and when idle a lone request is written at once (after the current tick, so the
 * adds of one tick share a commit). Each promise resolves only after the commit of its group.
 */
import { Worker } from "node:worker_threads";
import { StoreUnavailableError } from "../../errors.ts";
import type { AddWorkItemOutcome, NewWorkItem } from "../store.ts";
import type { IntakeJob, IntakeResult } from "./intake-sql.ts";

interface Pending {
  job: IntakeJob;
  resolve: (outcome: AddWorkItemOutcome) => void;
  reject: (error: unknown) => void;
}

type Reply = { id: number; results: IntakeResult[] } | { id: number; failed: { message: string; code: string | undefined } };

/** Group sizes seen so far: how many commits served how many items. */
export interface GroupCommitStats {
  groups: number;
  items: number;
  largest: number;
  /** sizes[n] = number of groups of n items (n capped at the last slot). */
  sizes: number[];
}

/** An item the writer refused on its own (the rest of its group was stored). */
export class IntakeItemError extends Error {
  override name = "IntakeItemError";
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

const MAX_GROUP = 1000;

function startWorker(path: string): Worker {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./intake-worker.js", import.meta.url), { workerData: { path } });
  // Run from source (tsx: tests, npm start): loader hooks are not inherited by worker threads, so
  // the worker registers tsx itself before it loads the TypeScript worker module.
  const tsx = import.meta.resolve("tsx/esm/api");
  const worker = new URL("./intake-worker.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`;
  return new Worker(code, { eval: true, workerData: { path } });
}

export class IntakeWriter {
  private readonly worker: Worker;
  private queue: Pending[] = [];
  private inFlight: Pending[] | undefined;
  private nextId = 1;
  private scheduled = false;
  private closed = false;
  private drained: (() => void) | undefined;
  private broken: Error | undefined;
  readonly stats: GroupCommitStats = { groups: 0, items: 0, largest: 0, sizes: new Array(65).fill(0) };

  constructor(path: string) {
    this.worker = startWorker(path);
    this.worker.on("message", (reply: Reply) => this.settle(reply));
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", (code) => {
      if (!this.closed) this.fail(new Error(`the intake writer thread exited with code ${code}`));
    });
    // An idle writer must not keep the process alive on its own.
    this.worker.unref();
  }

  add(input: NewWorkItem): Promise<AddWorkItemOutcome> {
    if (this.closed || this.broken) return Promise.reject(new StoreUnavailableError("the intake writer is not running", { cause: this.broken }));
    const job: IntakeJob = {
      companyId: input.companyId,
      workType: input.workType,
      customerReference: input.customerReference,
      documentReference: input.documentReference,
      webhookUrl: input.webhookUrl,
      requestJson: JSON.stringify(input.request),
      batchMaxItems: input.batchMaxItems,
      ...(input.idempotency ? { idempotency: input.idempotency } : {}),
    };
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      if (!this.inFlight && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.send();
        });
      }
    });
  }

  /** Resolves once every queued add is settled; then stops the writer thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.inFlight || this.queue.length > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        if (!this.inFlight && !this.scheduled) this.send();
      });
    }
    this.closed = true;
    if (this.broken) return;
    this.worker.ref();
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.worker.postMessage({ close: true });
    await exited;
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0) {
      if (!this.inFlight && this.queue.length === 0) this.drained?.();
      return;
    }
    const group = this.queue.length <= MAX_GROUP ? this.queue : this.queue.slice(0, MAX_GROUP);
    this.queue = this.queue.length <= MAX_GROUP ? [] : this.queue.slice(MAX_GROUP);
    this.inFlight = group;
    this.worker.ref();
    this.worker.postMessage({ id: this.nextId++, jobs: group.map((p) => p.job) });
    this.record(group.length);
  }

  private settle(reply: Reply): void {
    const group = this.inFlight ?? [];
    this.inFlight = undefined;
    this.worker.unref();
    if ("failed" in reply) {
      // The commit failed: nothing of this group is stored, so nobody may see a 200.
      const error = new StoreUnavailableError(`SQLite commit failed: ${reply.failed.message}`);
      for (const pending of group) pending.reject(error);
    } else {
      reply.results.forEach((result, index) => {
        const pending = group[index]!;
        if (result.kind === "error") pending.reject(new IntakeItemError(result.message, result.code));
        else if (result.kind === "keyReused") pending.resolve({ kind: "keyReused" });
        else pending.resolve({ kind: result.kind, key: { workBatchId: result.workBatchId, workItemId: result.workItemId } });
      });
    }
    this.send();
  }

  private fail(error: Error): void {
    this.broken = error;
    const stranded = [...(this.inFlight ?? []), ...this.queue];
    this.inFlight = undefined;
    this.queue = [];
    const unavailable = new StoreUnavailableError("the intake writer stopped", { cause: error });
    for (const pending of stranded) pending.reject(unavailable);
    this.drained?.();
  }

  private record(size: number): void {
    this.stats.groups += 1;
    this.stats.items += size;
    this.stats.largest = Math.max(this.stats.largest, size);
    this.stats.sizes[Math.min(size, this.stats.sizes.length - 1)]! += 1;
  }
}
