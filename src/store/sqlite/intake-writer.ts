/**
 * Group commit for the embedded store, on a writer thread (intake-writer-thread.ts).
 *
 * The adds of one event-loop tick go to the writer thread as one message. While the writer
 * commits one group (and waits for its fsync), the event loop keeps parsing, validating and
 * posting; when the commit is done, the writer takes everything posted meanwhile as the next
 * group. So under load one fsync serves many requests, the writer never idles waiting for the
 * event loop, and when idle a lone request is written at once. Each promise resolves only after
 * the commit of its group.
 */
import { Worker } from "node:worker_threads";
import { decodeBulkAnswer } from "../core/bulk-answer.ts";
import { StoreUnavailableError } from "../errors.ts";
import type { AddWorkItemOutcome, AddWorkItemsOutcome, NewWorkItem, NewWorkItems, WorkItemFields } from "../store.ts";
import type { IntakeBulkJob, IntakeBulkResult, IntakeItem, IntakeJob, IntakeResult } from "./intake-sql.ts";

interface Pending {
  job: IntakeJob | IntakeBulkJob;
  /** Settles the caller's promise with the writer's result for this job. */
  settle: (result: IntakeResult | IntakeBulkResult) => void;
  reject: (error: unknown) => void;
}

type Reply =
  | { parts: Array<{ id: number; results: Array<IntakeResult | IntakeBulkResult> }>; commitMs: number; size: number }
  | { ids: number[]; failed: { message: string; code: string | undefined } };

/** Group sizes seen so far: how many commits served how many items, and how long they took. */
export interface GroupCommitStats {
  groups: number;
  items: number;
  largest: number;
  /** sizes[n] = number of groups of n items (n capped at the last slot). */
  sizes: number[];
  /** commitMs[n] = number of groups whose transaction took n to n+1 ms (capped at the last slot). */
  commitMs: number[];
}

/** A job the writer refused on its own (the rest of its group was stored). */
export class IntakeItemError extends Error {
  override name = "IntakeItemError";
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

function startWriterThread(path: string): Worker {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./intake-writer-thread.js", import.meta.url), { workerData: { path } });
  const module = new URL("./intake-writer-thread.ts", import.meta.url).href;
  return new Worker(new URL("./ts-thread-entry.mjs", import.meta.url), { workerData: { path, module } });
}

export class IntakeWriter {
  /**
   * Started by the first add, not with the store: most processes that open the store never add
   * (every CLI call, a ROLE=worker process), and the thread cost each of them 40 ms compiled
   * and 200 ms under tsx, which loads itself again in the thread.
   */
  private worker: Worker | undefined;
  private queue: Pending[] = [];
  /** Posted to the writer, not answered yet, by message id. */
  private readonly inFlight = new Map<number, Pending[]>();
  private nextId = 1;
  private scheduled = false;
  private closed = false;
  private drained: (() => void) | undefined;
  private broken: Error | undefined;
  readonly stats: GroupCommitStats = { groups: 0, items: 0, largest: 0, sizes: new Array(65).fill(0), commitMs: new Array(51).fill(0) };

  constructor(private readonly path: string) {}

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWriterThread(this.path);
    worker.on("message", (reply: Reply) => this.settle(reply));
    worker.on("error", (error) => this.fail(error));
    worker.on("exit", (code) => {
      if (!this.closed) this.fail(new Error(`the intake writer thread exited with code ${code}`));
    });
    // An idle writer must not keep the process alive on its own.
    worker.unref();
    return (this.worker = worker);
  }

  add(input: NewWorkItem): Promise<AddWorkItemOutcome> {
    const job: IntakeJob = {
      companyId: input.companyId,
      workType: input.workType,
      batchMaxItems: input.batchMaxItems,
      ...intakeItem(input),
      ...(input.idempotency ? { idempotency: input.idempotency } : {}),
    };
    return this.enqueue(job, (result) => {
      if (result.kind === "error") throw new IntakeItemError(result.message, result.code);
      if (result.kind === "keyReused") return { kind: "keyReused" };
      if (!("workItemId" in result)) throw new Error("the intake writer answered a single add with a bulk result");
      return { kind: result.kind, key: { workBatchId: result.workBatchId, workItemId: result.workItemId } };
    });
  }

  /** A bulk add: one job, so its items are committed in one transaction or not at all. */
  addMany(input: NewWorkItems): Promise<AddWorkItemsOutcome> {
    const { idempotency } = input;
    const job: IntakeBulkJob = {
      companyId: input.companyId,
      workType: input.workType,
      batchMaxItems: input.batchMaxItems,
      items: input.items.map(intakeItem),
      refusedJson: JSON.stringify(idempotency?.refused ?? []),
      ...(idempotency ? { idempotency: { key: idempotency.key, requestHash: idempotency.requestHash, retentionSeconds: idempotency.retentionSeconds } } : {}),
    };
    return this.enqueue(job, (result) => {
      if (result.kind === "error") throw new IntakeItemError(result.message, result.code);
      if (result.kind === "keyReused") return { kind: "keyReused" };
      if (result.kind === "replayed" && "answer" in result) return { kind: "replayed", ...decodeBulkAnswer(result.answer) };
      if (!("keys" in result)) throw new Error("the intake writer answered a bulk add with a single result");
      return { kind: "created", keys: result.keys.map(([workBatchId, workItemId]) => ({ workBatchId, workItemId })) };
    });
  }

  private enqueue<O>(job: IntakeJob | IntakeBulkJob, outcome: (result: IntakeResult | IntakeBulkResult) => O): Promise<O> {
    if (this.closed || this.broken) return Promise.reject(new StoreUnavailableError("the intake writer is not running", { cause: this.broken }));
    return new Promise((resolve, reject) => {
      const settle = (result: IntakeResult | IntakeBulkResult) => {
        try {
          resolve(outcome(result));
        } catch (error) {
          reject(error);
        }
      };
      this.queue.push({ job, settle, reject });
      if (!this.scheduled) {
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
    if (this.inFlight.size > 0 || this.queue.length > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        if (!this.scheduled) this.send();
      });
    }
    this.closed = true;
    const worker = this.worker;
    if (this.broken || !worker) return;
    worker.ref();
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.postMessage({ close: true });
    await exited;
  }

  private send(): void {
    if (this.queue.length > 0) {
      const id = this.nextId++;
      this.inFlight.set(id, this.queue);
      const worker = this.thread();
      worker.postMessage({ id, jobs: this.queue.map((p) => p.job) });
      this.queue = [];
      worker.ref();
    }
    if (this.inFlight.size === 0) this.drained?.();
  }

  private settle(reply: Reply): void {
    if ("failed" in reply) {
      // The commit failed: nothing of this group is stored, so nobody may see a 200.
      const error = new StoreUnavailableError(`SQLite commit failed: ${reply.failed.message}`);
      for (const id of reply.ids) {
        for (const pending of this.inFlight.get(id) ?? []) pending.reject(error);
        this.inFlight.delete(id);
      }
    } else {
      this.record(reply.size, reply.commitMs);
      for (const { id, results } of reply.parts) {
        const group = this.inFlight.get(id) ?? [];
        this.inFlight.delete(id);
        results.forEach((result, index) => group[index]!.settle(result));
      }
    }
    if (this.inFlight.size === 0) {
      this.worker?.unref();
      if (this.queue.length === 0) this.drained?.();
    }
  }

  private fail(error: Error): void {
    this.broken = error;
    const stranded = [...[...this.inFlight.values()].flat(), ...this.queue];
    this.inFlight.clear();
    this.queue = [];
    const unavailable = new StoreUnavailableError("the intake writer stopped", { cause: error });
    for (const pending of stranded) pending.reject(unavailable);
    this.drained?.();
  }

  private record(size: number, commitMs: number): void {
    this.stats.commitMs[Math.min(Math.floor(commitMs), this.stats.commitMs.length - 1)]! += 1;
    this.stats.groups += 1;
    this.stats.items += size;
    this.stats.largest = Math.max(this.stats.largest, size);
    this.stats.sizes[Math.min(size, this.stats.sizes.length - 1)]! += 1;
  }
}

function intakeItem(fields: WorkItemFields): IntakeItem {
  return {
    customerReference: fields.customerReference,
    documentReference: fields.documentReference,
    webhookUrl: fields.webhookUrl,
    requestJson: JSON.stringify(fields.request),
    deadlineAt: fields.deadlineAt ?? null,
    traceParent: fields.traceParent ?? null,
  };
}
