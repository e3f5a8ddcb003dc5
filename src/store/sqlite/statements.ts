/** Every SQL statement of the embedded store, named and prepared once. */
import type Database from "better-sqlite3";

type StatementName =
  | "ping" | "insertCompany" | "getCompany" | "insertApiKey" | "findApiKey" | "listApiKeys" | "revokeApiKey"
  | "getWebhookSecret" | "setWebhookSecret" | "findIdempotencyKey" | "deleteIdempotencyKey" | "insertIdempotencyKey"
  | "findOpenBatch" | "closeBatch" | "insertOpenBatch" | "countBatchItem" | "insertWorkItem" | "getWorkItem"
  | "getWorkBatch" | "countBatchItemsByStatus" | "countRows"
  | "cancelWorkItem" | "getWorkItemWithBatchStatus" | "closeOpenBatches" | "claimBatch" | "renewBatchLease" | "markItemsInProgress"
  | "itemSucceeded" | "itemFailed" | "itemRetry" | "insertOutboxRow" | "batchLeaseOwner" | "waitingItems" | "completeBatch"
  | "releaseBatch" | "ensureWebhookSecret" | "claimWebhookDeliveries" | "recordWebhookAttempt" | "countPendingWebhookDeliveries";

export const ITEM_COLUMNS = `work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at`;

export function prepareStatements(db: Database.Database): Record<StatementName, Database.Statement> {
  return {
    // Reads a page of the file, so an unreadable or vanished database does not look healthy.
    ping: db.prepare("SELECT 1 FROM schema_migrations LIMIT 1"),
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
    // Positional parameters and lastInsertRowid instead of named ones and RETURNING: this runs
    // once per stored item, and both cost measurably more in the writer thread.
    insertWorkItem: db.prepare(
      `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url,
         request, created_at, updated_at)
       VALUES (?, ?, ?, 'New', ?, ?, ?, ?, ?, ?)`,
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
    ...lifecycleStatements(db),
  };
}

/** The bot's and the webhook dispatcher's statements (migration 0002). */
function lifecycleStatements(db: Database.Database) {
  return {
    cancelWorkItem: db.prepare(
      `UPDATE work_items SET status = 'Cancelled', updated_at = :now, completed_at = :now
       WHERE company_id = :company_id AND work_item_id = :work_item_id AND status = 'New'
         AND EXISTS (SELECT 1 FROM work_batches b
                     WHERE b.company_id = work_items.company_id AND b.work_batch_id = work_items.work_batch_id AND b.status = 'Open')
       RETURNING ${ITEM_COLUMNS}`,
    ),
    getWorkItemWithBatchStatus: db.prepare(
      `SELECT ${ITEM_COLUMNS.replace(/(\w+)/g, "i.$1")}, b.status AS batch_status
       FROM work_items i JOIN work_batches b ON b.company_id = i.company_id AND b.work_batch_id = i.work_batch_id
       WHERE i.company_id = ? AND i.work_item_id = ?`,
    ),
    closeOpenBatches: db.prepare("UPDATE work_batches SET status = 'Closed', closed_at = ? WHERE status = 'Open' AND item_count > 0"),
    claimBatch: db.prepare(
      `UPDATE work_batches SET status = 'Processing', lease_owner = :owner, lease_expires_at = :lease_expires_at, next_run_at = NULL
       WHERE (company_id, work_batch_id) = (
         SELECT company_id, work_batch_id FROM work_batches
         WHERE status = 'Closed'
            OR (status = 'Processing' AND (lease_expires_at IS NULL OR lease_expires_at <= :due_before)
                AND (next_run_at IS NULL OR next_run_at <= :due_before))
         ORDER BY work_batch_id LIMIT 1)
       RETURNING company_id, work_batch_id, work_type, lease_owner, lease_expires_at`,
    ),
    renewBatchLease: db.prepare(
      `UPDATE work_batches SET lease_expires_at = :lease_expires_at
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND status = 'Processing' AND lease_owner = :owner`,
    ),
    markItemsInProgress: db.prepare(
      `UPDATE work_items SET status = 'InProgress', updated_at = :now
       WHERE company_id = :company_id AND work_item_id IN (
         SELECT work_item_id FROM work_items
         WHERE company_id = :company_id AND work_batch_id = :work_batch_id
           AND (status = 'InProgress' OR (status = 'New' AND (next_attempt_at IS NULL OR next_attempt_at <= :due_before)))
         ORDER BY work_item_id LIMIT :limit)
       RETURNING company_id, work_batch_id, work_item_id, work_type, request, attempts`,
    ),
    itemSucceeded: db.prepare(
      `UPDATE work_items SET status = 'Successful', result = :result, error = NULL, next_attempt_at = NULL, last_error = NULL,
         updated_at = :now, completed_at = :now
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND work_item_id = :work_item_id AND status = 'InProgress'
       RETURNING webhook_url`,
    ),
    itemFailed: db.prepare(
      `UPDATE work_items SET status = 'Failed', error = :error, attempts = attempts + :attempt, next_attempt_at = NULL,
         last_error = :last_error, updated_at = :now, completed_at = :now
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND work_item_id = :work_item_id AND status = 'InProgress'
       RETURNING webhook_url`,
    ),
    itemRetry: db.prepare(
      `UPDATE work_items SET status = 'New', attempts = attempts + 1, next_attempt_at = :next_attempt_at, last_error = :last_error,
         updated_at = :now
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND work_item_id = :work_item_id AND status = 'InProgress'
       RETURNING webhook_url`,
    ),
    insertOutboxRow: db.prepare(
      `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at)
       VALUES (:company_id, :event_id, :work_item_id, :event_type, :url, 'Pending', :now, :now)`,
    ),
    batchLeaseOwner: db.prepare("SELECT status, lease_owner FROM work_batches WHERE company_id = ? AND work_batch_id = ?"),
    waitingItems: db.prepare(
      `SELECT COUNT(*) AS waiting, MIN(COALESCE(next_attempt_at, :now)) AS next_run_at FROM work_items
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND status IN ('New', 'InProgress')`,
    ),
    completeBatch: db.prepare(
      `UPDATE work_batches SET status = 'Completed', completed_at = :now, lease_owner = NULL, lease_expires_at = NULL,
         next_run_at = NULL, last_error = NULL
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND status = 'Processing' AND lease_owner = :owner`,
    ),
    releaseBatch: db.prepare(
      `UPDATE work_batches SET lease_owner = NULL, lease_expires_at = NULL, next_run_at = :next_run_at, last_error = :last_error
       WHERE company_id = :company_id AND work_batch_id = :work_batch_id AND status = 'Processing' AND lease_owner = :owner`,
    ),
    ensureWebhookSecret: db.prepare(
      "UPDATE companies SET webhook_secret = COALESCE(webhook_secret, ?) WHERE company_id = ? RETURNING webhook_secret",
    ),
    claimWebhookDeliveries: db.prepare(
      `UPDATE webhook_outbox SET lease_owner = :owner, next_attempt_at = :lease_expires_at
       WHERE (company_id, event_id) IN (
         SELECT company_id, event_id FROM webhook_outbox WHERE status = 'Pending' AND next_attempt_at <= :now
         ORDER BY next_attempt_at LIMIT :limit)
       RETURNING company_id, event_id, work_item_id, event_type, url, attempts, created_at`,
    ),
    recordWebhookAttempt: db.prepare(
      `UPDATE webhook_outbox SET status = :status, attempts = attempts + 1, next_attempt_at = COALESCE(:next_attempt_at, next_attempt_at),
         lease_owner = NULL, last_status = :last_status, last_error = :last_error, delivered_at = :delivered_at
       WHERE company_id = :company_id AND event_id = :event_id AND status = 'Pending' AND lease_owner = :owner`,
    ),
    /** Operator gauge across companies (the partial index webhook_outbox_due holds exactly these rows). */
    countPendingWebhookDeliveries: db.prepare("SELECT COUNT(*) AS pending FROM webhook_outbox WHERE status = 'Pending'"),
  };
}

export type Statements = Record<StatementName, Database.Statement>;
