/** The statements of the SQLite intake fast path, prepared once on the writer thread's connection. */
import type Database from "better-sqlite3";
import { BATCHES_SQL } from "../core/sql-batches.ts";
import { newIdAboveRetired } from "./retired-ids.ts";
import { GENERATION_ID_READ, STORE_GENERATION_READ } from "./store-generation.ts";

type IntakeStatementName =
  | "findIdempotencyKey" | "deleteIdempotencyKey" | "insertIdempotencyKey" | "insertIdempotencyAnswer" | "findOpenBatch" | "closeBatch"
  | "insertOpenBatch" | "setBatchItemCount" | "insertWorkItem";

export type IntakeStatements = Record<IntakeStatementName, Database.Statement>;

export function prepareIntakeStatements(db: Database.Database): IntakeStatements {
  return {
    findIdempotencyKey: db.prepare(
      "SELECT request_hash, work_batch_id, work_item_id, response, created_at FROM idempotency_keys WHERE company_id = ? AND idempotency_key = ?",
    ),
    deleteIdempotencyKey: db.prepare("DELETE FROM idempotency_keys WHERE company_id = ? AND idempotency_key = ?"),
    insertIdempotencyKey: db.prepare(
      "INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    /** A bulk add's key: it names the whole answer (core/bulk-answer.ts), not one item. */
    insertIdempotencyAnswer: db.prepare(
      "INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)",
    ),
    findOpenBatch: db.prepare("SELECT work_batch_id, item_count FROM work_batches WHERE company_id = ? AND work_type = ? AND status = 'Open'"),
    // Named $1, $2, $3 as the core writes it: run with { 1: companyId, 2: workBatchId, 3: now }.
    closeBatch: db.prepare(BATCHES_SQL.closeBatch.text as string),
    insertOpenBatch: db.prepare(
      `INSERT INTO work_batches (company_id, work_type, status, created_at, work_batch_id) VALUES (?, ?, 'Open', ?, ${newIdAboveRetired("work_batches")})
       RETURNING work_batch_id, item_count`,
    ),
    setBatchItemCount: db.prepare("UPDATE work_batches SET item_count = ? WHERE company_id = ? AND work_batch_id = ?"),
    // Positional parameters and lastInsertRowid instead of named ones and RETURNING: this runs
    // once per stored item, and both cost measurably more in the writer thread.
    insertWorkItem: db.prepare(
      `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url,
         request, deadline_at, created_at, updated_at, trace_parent, store_generation, generation_id, work_item_id)
       VALUES (?, ?, ?, 'New', ?, ?, ?, ?, ?, ?, ?, ?, ${STORE_GENERATION_READ}, ${GENERATION_ID_READ}, ${newIdAboveRetired("work_items")})`,
    ),
  };
}
