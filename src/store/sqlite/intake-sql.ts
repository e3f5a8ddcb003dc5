/**
 * The SQL of the add path: one group of work items, coalesced from concurrent requests, written
 * in ONE transaction (one fsync for the whole group). Runs on the intake writer's own connection.
 * A job is one request: a single add (one item) or a bulk add (many items of one company, SPEC
 * §11.1, stored together or not at all). Both take the same steps, written once below.
 *
 * Fast path: the whole group without savepoints, the company's open batch looked up once per
 * group and its item count written once per batch. If any job fails, that transaction is rolled
 * back and the group is written again with a savepoint per job, so only the failing jobs fail
 * (the slow path, which is also the reference behaviour). If the COMMIT itself fails, nothing
 * of the group is stored and every request of it is told so.
 */
import type Database from "better-sqlite3";
import { encodeBulkAnswer } from "../core/bulk-answer.ts";
import { prepareIntakeStatements, type IntakeStatements } from "./intake-statements.ts";

/** One item as sent to the writer: the request body is already JSON text. */
export interface IntakeItem {
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  requestJson: string;
  deadlineAt: string | null;
  traceParent: string | null;
}

interface IntakeTarget {
  companyId: number;
  workType: string;
  batchMaxItems: number;
  idempotency?: { key: string; requestHash: string; retentionSeconds: number };
}

/** A single add. */
export interface IntakeJob extends IntakeTarget, IntakeItem {}

/** A bulk add: its items in order, and the refused ones as JSON text for its idempotency record. */
export interface IntakeBulkJob extends IntakeTarget {
  items: IntakeItem[];
  refusedJson: string;
}

export type IntakeResult =
  | { kind: "created" | "replayed"; workBatchId: number; workItemId: number }
  | { kind: "keyReused" }
  | { kind: "error"; message: string; code: string | undefined };

export type IntakeBulkResult =
  | { kind: "created"; keys: Array<[number, number]> }
  /** The stored answer of the first request, as text (core/bulk-answer.ts). */
  | { kind: "replayed"; answer: string }
  | { kind: "keyReused" }
  | { kind: "error"; message: string; code: string | undefined };

export const isBulkJob = (job: IntakeJob | IntakeBulkJob): job is IntakeBulkJob => "items" in job;

/** Items a job writes: what the writer thread counts towards a group's size. */
export const itemsOf = (job: IntakeJob | IntakeBulkJob) => (isBulkJob(job) ? job.items.length : 1);

/** The whole group was not stored: the commit (or the transaction around it) failed. */
export class GroupCommitError extends Error {
  override name = "GroupCommitError";
}

interface OpenBatch {
  companyId: number;
  workBatchId: number;
  itemCount: number;
  /** Item count as stored, to know whether the row needs an update at the end. */
  storedCount: number;
}

/** The open batches a transaction has written to, by company and work type; counts are written at its end. */
type OpenBatches = Map<string, OpenBatch>;

export function createIntake(db: Database.Database): (jobs: Array<IntakeJob | IntakeBulkJob>) => Array<IntakeResult | IntakeBulkResult> {
  const sql = prepareIntakeStatements(db);

  /** Signals that a job (not the commit) failed inside the fast path. */
  class JobFailed extends Error {}

  const fastGroup = db.transaction((jobs: Array<IntakeJob | IntakeBulkJob>, now: string) => {
    const batches: OpenBatches = new Map();
    const results = jobs.map((job) => {
      try {
        return addJob(sql, batches, job, now);
      } catch (error) {
        throw new JobFailed("a job of the group failed", { cause: error });
      }
    });
    writeCounts(sql, batches);
    return results;
  });

  // Nested better-sqlite3 transactions are savepoints: a failing job rolls back alone.
  const addOne = db.transaction((job: IntakeJob | IntakeBulkJob, now: string) => {
    const batches: OpenBatches = new Map();
    const result = addJob(sql, batches, job, now);
    writeCounts(sql, batches);
    return result;
  });
  const slowGroup = db.transaction((jobs: Array<IntakeJob | IntakeBulkJob>, now: string): Array<IntakeResult | IntakeBulkResult> =>
    jobs.map((job) => {
      try {
        return addOne(job, now);
      } catch (error) {
        return { kind: "error", message: (error as Error).message, code: (error as { code?: string }).code };
      }
    }),
  );

  return (jobs) => {
    const now = new Date().toISOString();
    try {
      // IMMEDIATE: take the write lock first, so no other writer can invalidate what the group read.
      return fastGroup.immediate(jobs, now);
    } catch (error) {
      if (!(error instanceof JobFailed)) throw new GroupCommitError("the group's transaction failed", { cause: error });
    }
    try {
      return slowGroup.immediate(jobs, now);
    } catch (error) {
      throw new GroupCommitError("the group's transaction failed", { cause: error });
    }
  };
}

interface KnownKey {
  requestHash: string;
  workBatchId: number | null;
  workItemId: number | null;
  /** A bulk add's whole answer; null for a single add's key. */
  response: string | null;
}

/** The unexpired record of the job's idempotency key, if any; deletes an expired one. */
function knownKey(sql: IntakeStatements, job: IntakeJob | IntakeBulkJob, now: string): KnownKey | undefined {
  const { idempotency } = job;
  if (!idempotency) return undefined;
  const previous = sql.findIdempotencyKey.get(job.companyId, idempotency.key) as
    | { request_hash: string; work_batch_id: number | null; work_item_id: number | null; response: string | null; created_at: string }
    | undefined;
  if (!previous) return undefined;
  if (Date.parse(previous.created_at) + idempotency.retentionSeconds * 1000 > Date.parse(now)) {
    return { requestHash: previous.request_hash, workBatchId: previous.work_batch_id, workItemId: previous.work_item_id, response: previous.response };
  }
  sql.deleteIdempotencyKey.run(job.companyId, idempotency.key);
  return undefined;
}

function addJob(sql: IntakeStatements, batches: OpenBatches, job: IntakeJob | IntakeBulkJob, now: string): IntakeResult | IntakeBulkResult {
  const known = knownKey(sql, job, now);
  const sameBody = known !== undefined && known.requestHash === job.idempotency?.requestHash;
  if (isBulkJob(job)) {
    if (known) return sameBody && known.response !== null ? { kind: "replayed", answer: known.response } : { kind: "keyReused" };
    const keys = job.items.map((item): [number, number] => {
      const { workBatchId, workItemId } = appendItem(sql, batches, job, item, now);
      return [workBatchId, workItemId];
    });
    if (job.idempotency) {
      const { key, requestHash } = job.idempotency;
      sql.insertIdempotencyAnswer.run(job.companyId, key, requestHash, encodeBulkAnswer(keys, job.refusedJson), now);
    }
    return { kind: "created", keys };
  }
  if (known) {
    if (!sameBody || known.workBatchId === null || known.workItemId === null) return { kind: "keyReused" };
    return { kind: "replayed", workBatchId: known.workBatchId, workItemId: known.workItemId };
  }
  const key = appendItem(sql, batches, job, job, now);
  if (job.idempotency) {
    sql.insertIdempotencyKey.run(job.companyId, job.idempotency.key, job.idempotency.requestHash, key.workBatchId, key.workItemId, now);
  }
  return { kind: "created", ...key };
}

/**
 * Appends one item to the company's Open batch, the one of this transaction when it has one:
 * when that is full, it is closed and a new one opens (rollover).
 */
function appendItem(sql: IntakeStatements, batches: OpenBatches, target: IntakeTarget, item: IntakeItem, now: string): { workBatchId: number; workItemId: number } {
  const batchKey = `${target.companyId}\u0000${target.workType}`;
  let batch = batches.get(batchKey);
  if (!batch) {
    const row = sql.findOpenBatch.get(target.companyId, target.workType) as { work_batch_id: number; item_count: number } | undefined;
    if (row) batch = { companyId: target.companyId, workBatchId: row.work_batch_id, itemCount: row.item_count, storedCount: row.item_count };
  }
  if (batch && batch.itemCount >= target.batchMaxItems) {
    if (batch.itemCount !== batch.storedCount) sql.setBatchItemCount.run(batch.itemCount, target.companyId, batch.workBatchId);
    sql.closeBatch.run({ 1: target.companyId, 2: batch.workBatchId, 3: now });
    batch = undefined;
  }
  if (!batch) {
    const row = sql.insertOpenBatch.get(target.companyId, target.workType, now) as { work_batch_id: number; item_count: number };
    batch = { companyId: target.companyId, workBatchId: row.work_batch_id, itemCount: row.item_count, storedCount: row.item_count };
  }
  batches.set(batchKey, batch);
  const { lastInsertRowid } = sql.insertWorkItem.run(
    target.companyId,
    batch.workBatchId,
    target.workType,
    item.customerReference,
    item.documentReference,
    item.webhookUrl,
    item.requestJson,
    item.deadlineAt,
    now,
    now,
    item.traceParent,
  );
  batch.itemCount += 1;
  return { workBatchId: batch.workBatchId, workItemId: Number(lastInsertRowid) };
}

/** Writes the item count of every batch the transaction appended to, once. */
function writeCounts(sql: IntakeStatements, batches: OpenBatches): void {
  for (const batch of batches.values()) {
    if (batch.itemCount !== batch.storedCount) sql.setBatchItemCount.run(batch.itemCount, batch.companyId, batch.workBatchId);
  }
}
