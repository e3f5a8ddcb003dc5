/**
 * The SQL of the add path: one group of work items, coalesced from concurrent requests, written
 * in ONE transaction (one fsync for the whole group). Runs on the intake writer's own connection.
 *
 * Fast path: the whole group without savepoints, the company's open batch looked up once per
 * group and its item count written once per batch. If any item fails, that transaction is
 * rolled back and the group is written again with a savepoint per item, so only the failing
 * items fail (the slow path, which is also the reference behaviour). If the COMMIT itself fails,
 * nothing of the group is stored and every request of it is told so.
 */
import type Database from "better-sqlite3";
import { prepareIntakeStatements, type IntakeStatements } from "./intake-statements.ts";

/** One item as sent to the writer: the request body is already JSON text. */
export interface IntakeJob {
  companyId: number;
  workType: string;
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  requestJson: string;
  batchMaxItems: number;
  deadlineAt: string | null;
  idempotency?: { key: string; requestHash: string; retentionSeconds: number };
}

export type IntakeResult =
  | { kind: "created" | "replayed"; workBatchId: number; workItemId: number }
  | { kind: "keyReused" }
  | { kind: "error"; message: string; code: string | undefined };

/** The whole group was not stored: the commit (or the transaction around it) failed. */
export class GroupCommitError extends Error {
  override name = "GroupCommitError";
}

interface OpenBatch {
  workBatchId: number;
  itemCount: number;
  /** Item count as stored, to know whether the row needs an update at the end. */
  storedCount: number;
}

export function createIntake(db: Database.Database): (jobs: IntakeJob[]) => IntakeResult[] {
  const sql = prepareIntakeStatements(db);

  /** Signals that an item (not the commit) failed inside the fast path. */
  class ItemFailed extends Error {}

  const fastGroup = db.transaction((jobs: IntakeJob[], now: string): IntakeResult[] => {
    const batches = new Map<string, OpenBatch & { companyId: number }>();
    const results = jobs.map((job) => {
      try {
        return addFast(sql, batches, job, now);
      } catch (error) {
        throw new ItemFailed("an item of the group failed", { cause: error });
      }
    });
    for (const batch of batches.values()) {
      if (batch.itemCount !== batch.storedCount) sql.setBatchItemCount.run(batch.itemCount, batch.companyId, batch.workBatchId);
    }
    return results;
  });

  // Nested better-sqlite3 transactions are savepoints: a failing item rolls back alone.
  const addOne = db.transaction((job: IntakeJob, now: string) => addSlow(sql, job, now));
  const slowGroup = db.transaction((jobs: IntakeJob[], now: string): IntakeResult[] =>
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
      if (!(error instanceof ItemFailed)) throw new GroupCommitError("the group's transaction failed", { cause: error });
    }
    try {
      return slowGroup.immediate(jobs, now);
    } catch (error) {
      throw new GroupCommitError("the group's transaction failed", { cause: error });
    }
  };
}

type Idempotent = { kind: "replayed"; workBatchId: number; workItemId: number } | { kind: "keyReused" } | undefined;

/** Replays or refuses a known idempotency key; deletes an expired one. */
function checkIdempotency(sql: IntakeStatements, job: IntakeJob, now: string): Idempotent {
  const { idempotency } = job;
  if (!idempotency) return undefined;
  const previous = sql.findIdempotencyKey.get(job.companyId, idempotency.key) as
    | { request_hash: string; work_batch_id: number; work_item_id: number; created_at: string }
    | undefined;
  if (!previous) return undefined;
  const expired = Date.parse(previous.created_at) + idempotency.retentionSeconds * 1000 <= Date.parse(now);
  if (!expired) {
    if (previous.request_hash !== idempotency.requestHash) return { kind: "keyReused" };
    return { kind: "replayed", workBatchId: previous.work_batch_id, workItemId: previous.work_item_id };
  }
  sql.deleteIdempotencyKey.run(job.companyId, idempotency.key);
  return undefined;
}

function insertItem(sql: IntakeStatements, job: IntakeJob, workBatchId: number, now: string): IntakeResult {
  const { lastInsertRowid } = sql.insertWorkItem.run(
    job.companyId,
    workBatchId,
    job.workType,
    job.customerReference,
    job.documentReference,
    job.webhookUrl,
    job.requestJson,
    job.deadlineAt,
    now,
    now,
  );
  const workItemId = Number(lastInsertRowid);
  if (job.idempotency) {
    sql.insertIdempotencyKey.run(job.companyId, job.idempotency.key, job.idempotency.requestHash, workBatchId, workItemId, now);
  }
  return { kind: "created", workBatchId, workItemId };
}

function addFast(
  sql: IntakeStatements,
  batches: Map<string, OpenBatch & { companyId: number }>,
  job: IntakeJob,
  now: string,
): IntakeResult {
  const known = checkIdempotency(sql, job, now);
  if (known) return known;
  const batchKey = `${job.companyId}\u0000${job.workType}`;
  let batch = batches.get(batchKey);
  if (!batch) {
    const row = sql.findOpenBatch.get(job.companyId, job.workType) as { work_batch_id: number; item_count: number } | undefined;
    if (row) batch = { companyId: job.companyId, workBatchId: row.work_batch_id, itemCount: row.item_count, storedCount: row.item_count };
  }
  if (batch && batch.itemCount >= job.batchMaxItems) {
    if (batch.itemCount !== batch.storedCount) sql.setBatchItemCount.run(batch.itemCount, job.companyId, batch.workBatchId);
    sql.closeBatch.run(now, job.companyId, batch.workBatchId);
    batch = undefined;
  }
  if (!batch) {
    const row = sql.insertOpenBatch.get(job.companyId, job.workType, now) as { work_batch_id: number; item_count: number };
    batch = { companyId: job.companyId, workBatchId: row.work_batch_id, itemCount: row.item_count, storedCount: row.item_count };
  }
  batches.set(batchKey, batch);
  const result = insertItem(sql, job, batch.workBatchId, now);
  batch.itemCount += 1;
  return result;
}

/** One item on its own, counting it at once: used inside a savepoint per item. */
function addSlow(sql: IntakeStatements, job: IntakeJob, now: string): IntakeResult {
  const known = checkIdempotency(sql, job, now);
  if (known) return known;
  let batch = sql.findOpenBatch.get(job.companyId, job.workType) as { work_batch_id: number; item_count: number } | undefined;
  if (batch && batch.item_count >= job.batchMaxItems) {
    sql.closeBatch.run(now, job.companyId, batch.work_batch_id);
    batch = undefined;
  }
  batch ??= sql.insertOpenBatch.get(job.companyId, job.workType, now) as { work_batch_id: number; item_count: number };
  const result = insertItem(sql, job, batch.work_batch_id, now);
  sql.countBatchItem.run(job.companyId, batch.work_batch_id);
  return result;
}
