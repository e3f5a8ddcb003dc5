/** Every SQL statement of the embedded store, named and prepared once. */
import type Database from "better-sqlite3";

type StatementName =
  | "ping" | "insertCompany" | "getCompany" | "insertApiKey" | "findApiKey" | "listApiKeys" | "revokeApiKey"
  | "getWebhookSecret" | "setWebhookSecret" | "findIdempotencyKey" | "deleteIdempotencyKey" | "insertIdempotencyKey"
  | "findOpenBatch" | "closeBatch" | "insertOpenBatch" | "countBatchItem" | "insertWorkItem" | "getWorkItem"
  | "getWorkBatch" | "countBatchItemsByStatus" | "countRows";

export const ITEM_COLUMNS = `work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at`;

export function prepareStatements(db: Database.Database): Record<StatementName, Database.Statement> {
  return {
    ping: db.prepare("SELECT 1"),
    insertCompany: db.prepare(
      "INSERT INTO companies (company_id, name, created_at) VALUES (:company_id, :name, :created_at) RETURNING company_id, name, created_at",
    ),
    getCompany: db.prepare("SELECT company_id, name, created_at FROM companies WHERE company_id = ?"),
    insertApiKey: db.prepare(
      `INSERT INTO api_keys (company_id, key_id, name, secret_hash, created_at) VALUES (:company_id, :key_id, :name, :secret_hash, :created_at)
       RETURNING key_id, company_id, name, created_at, revoked_at`,
    ),
    findApiKey: db.prepare(
      "SELECT key_id, company_id, name, secret_hash, created_at, revoked_at FROM api_keys WHERE company_id = ? AND key_id = ?",
    ),
    listApiKeys: db.prepare("SELECT key_id, company_id, name, created_at, revoked_at FROM api_keys WHERE company_id = ? ORDER BY created_at, key_id"),
    revokeApiKey: db.prepare(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?
       RETURNING key_id, company_id, name, created_at, revoked_at`,
    ),
    getWebhookSecret: db.prepare("SELECT webhook_secret FROM companies WHERE company_id = ?"),
    setWebhookSecret: db.prepare("UPDATE companies SET webhook_secret = ? WHERE company_id = ?"),
    findIdempotencyKey: db.prepare(
      "SELECT request_hash, work_batch_id, work_item_id, created_at FROM idempotency_keys WHERE company_id = ? AND idempotency_key = ?",
    ),
    deleteIdempotencyKey: db.prepare("DELETE FROM idempotency_keys WHERE company_id = ? AND idempotency_key = ?"),
    insertIdempotencyKey: db.prepare(
      "INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    findOpenBatch: db.prepare(
      "SELECT work_batch_id, item_count FROM work_batches WHERE company_id = ? AND work_type = ? AND status = 'Open'",
    ),
    closeBatch: db.prepare("UPDATE work_batches SET status = 'Closed', closed_at = ? WHERE company_id = ? AND work_batch_id = ? AND status = 'Open'"),
    insertOpenBatch: db.prepare(
      "INSERT INTO work_batches (company_id, work_type, status, created_at) VALUES (?, ?, 'Open', ?) RETURNING work_batch_id, item_count",
    ),
    countBatchItem: db.prepare("UPDATE work_batches SET item_count = item_count + 1 WHERE company_id = ? AND work_batch_id = ?"),
    insertWorkItem: db.prepare(
      `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url,
         request, created_at, updated_at)
       VALUES (:company_id, :work_batch_id, :work_type, 'New', :customer_reference, :document_reference, :webhook_url, :request, :now, :now)
       RETURNING work_item_id`,
    ),
    getWorkItem: db.prepare(`SELECT ${ITEM_COLUMNS} FROM work_items WHERE company_id = ? AND work_item_id = ?`),
    getWorkBatch: db.prepare(
      "SELECT work_batch_id, work_type, status, created_at, closed_at, completed_at FROM work_batches WHERE company_id = ? AND work_batch_id = ?",
    ),
    countBatchItemsByStatus: db.prepare(
      "SELECT status, COUNT(*) AS count FROM work_items WHERE company_id = ? AND work_batch_id = ? GROUP BY status",
    ),
    countRows: db.prepare(
      `SELECT (SELECT COUNT(*) FROM companies) AS companies, (SELECT COUNT(*) FROM api_keys) AS api_keys,
              (SELECT COUNT(*) FROM work_batches) AS work_batches, (SELECT COUNT(*) FROM work_items) AS work_items,
              (SELECT COUNT(*) FROM idempotency_keys) AS idempotency_keys`,
    ),
  };
}

export type Statements = Record<StatementName, Database.Statement>;
