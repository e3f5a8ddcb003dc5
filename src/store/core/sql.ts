/**
 * Every statement of the store core, named, written once for both backends (see ../port.ts for
 * the placeholders and the dialect fragments). Timestamps travel as ISO 8601 text: SQLite
 * stores and compares that text, PostgreSQL casts it to timestamptz.
 *
 * Every statement names `company_id`, the distribution column (docs/scaling.md). Most filter
 * by it; the few that look across companies say so, and are the first step of a sweep that
 * then goes company by company.
 */
import { statement } from "../port.ts";

export const ITEM_COLUMNS = `work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at`;
const KEY_COLUMNS = "key_id, company_id, name, created_at, revoked_at";
const OUTBOX_COLUMNS = "company_id, event_id, work_item_id, event_type, url, attempts, created_at";

/** A Processing batch whose lease is over or was released, and whose retry time has come ($1). */
const SLEEPING_PROCESSING = `status = 'Processing' AND (lease_expires_at IS NULL OR lease_expires_at <= $DUE)
  AND (next_run_at IS NULL OR next_run_at <= $DUE)`;
const sleepingProcessing = (placeholder: string) => SLEEPING_PROCESSING.replaceAll("$DUE", placeholder);

export const SQL = {
  insertCompany: statement("insert_company", "INSERT INTO companies (company_id, name, created_at) VALUES ($1, $2, $3) RETURNING company_id, name, created_at"),
  /** Across companies, admin only: the next free id for `companies create` without one. */
  nextCompanyId: statement("next_company_id", "SELECT COALESCE(MAX(company_id), 0) + 1 AS company_id FROM companies"),
  getCompany: statement("get_company", "SELECT company_id, name, created_at FROM companies WHERE company_id = $1"),

  insertApiKey: statement(
    "insert_api_key",
    `INSERT INTO api_keys (company_id, key_id, name, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${KEY_COLUMNS}`,
  ),
  findApiKey: statement("find_api_key", `SELECT ${KEY_COLUMNS}, secret_hash FROM api_keys WHERE company_id = $1 AND key_id = $2`),
  listApiKeys: statement("list_api_keys", `SELECT ${KEY_COLUMNS} FROM api_keys WHERE company_id = $1 ORDER BY created_at, key_id`),
  /** Across companies, admin only: `keys revoke --key-id` knows no company. */
  revokeApiKey: statement(
    "revoke_api_key",
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE key_id = $1 RETURNING ${KEY_COLUMNS}`,
  ),

  getWebhookSecret: statement("get_webhook_secret", "SELECT webhook_secret FROM companies WHERE company_id = $1"),
  setWebhookSecret: statement("set_webhook_secret", "UPDATE companies SET webhook_secret = $2 WHERE company_id = $1"),
  /** One atomic statement, so concurrent first uses agree on the secret. */
  ensureWebhookSecret: statement(
    "ensure_webhook_secret",
    "UPDATE companies SET webhook_secret = COALESCE(webhook_secret, $2) WHERE company_id = $1 RETURNING webhook_secret",
  ),

  getWorkItem: statement("get_work_item", `SELECT ${ITEM_COLUMNS} FROM work_items WHERE company_id = $1 AND work_item_id = $2`),
  /** One row per item status in the batch (one row with a NULL status for an empty batch). */
  getWorkBatch: statement(
    "get_work_batch",
    `SELECT b.work_batch_id, b.work_type, b.status, b.created_at, b.closed_at, b.completed_at,
            i.status AS item_status, COUNT(i.work_item_id) AS item_count
       FROM work_batches b
       LEFT JOIN work_items i ON i.company_id = b.company_id AND i.work_batch_id = b.work_batch_id
      WHERE b.company_id = $1 AND b.work_batch_id = $2
      GROUP BY b.company_id, b.work_batch_id, i.status`,
  ),

  /** Holds the item's batch until commit: the bot's close waits for a cancel, never half-way. */
  lockItemBatch: statement(
    "lock_item_batch",
    (d) => `SELECT b.status FROM work_batches b
     WHERE b.company_id = $1
       AND b.work_batch_id = (SELECT i.work_batch_id FROM work_items i WHERE i.company_id = $1 AND i.work_item_id = $2)${d.forShare}`,
  ),
  cancelWorkItem: statement(
    "cancel_work_item",
    `UPDATE work_items SET status = 'Cancelled', updated_at = $3, completed_at = $3
      WHERE company_id = $1 AND work_item_id = $2 AND status = 'New'
      RETURNING ${ITEM_COLUMNS}`,
  ),
  getWorkItemWithBatchStatus: statement(
    "get_work_item_with_batch_status",
    `SELECT ${ITEM_COLUMNS.replace(/(\w+)/g, "i.$1")}, b.status AS batch_status
       FROM work_items i JOIN work_batches b ON b.company_id = i.company_id AND b.work_batch_id = i.work_batch_id
      WHERE i.company_id = $1 AND i.work_item_id = $2`,
  ),

  /**
   * Across companies, the bot's sweep step 1: which companies have an Open batch to close or a
   * batch to claim ($1 = the run's start). Each part walks a status index.
   */
  companiesWithBotWork: statement(
    "companies_with_bot_work",
    `SELECT company_id, MAX(open_batch) AS open_batch FROM (
       SELECT company_id, 1 AS open_batch FROM work_batches WHERE status = 'Open' AND item_count > 0
       UNION ALL
       SELECT company_id, 0 AS open_batch FROM work_batches WHERE status = 'Closed' OR (${sleepingProcessing("$1")})
     ) work
     GROUP BY company_id ORDER BY company_id`,
  ),
  /**
   * The company's non-empty Open batches → Closed. Locked in the order intake locks them (work
   * type, bytewise), so a close and a group of appends never deadlock.
   */
  closeOpenBatches: statement(
    "close_open_batches",
    (d) => `WITH open AS (
       SELECT work_batch_id FROM work_batches
        WHERE company_id = $1 AND status = 'Open' AND item_count > 0
        ORDER BY work_type${d.byteOrder}${d.forUpdate})
     UPDATE work_batches SET status = 'Closed', closed_at = $2
      WHERE company_id = $1 AND work_batch_id IN (SELECT work_batch_id FROM open) AND status = 'Open'`,
  ),
  /** The company's oldest claimable batch; concurrent claimers skip each other's rows. */
  claimBatch: statement(
    "claim_batch",
    (d) => `WITH next AS (
       SELECT work_batch_id FROM work_batches
        WHERE company_id = $1 AND (status = 'Closed' OR (${sleepingProcessing("$3")}))
        ORDER BY work_batch_id LIMIT 1${d.forUpdateSkipLocked})
     UPDATE work_batches SET status = 'Processing', lease_owner = $2, lease_expires_at = $4, next_run_at = NULL
      WHERE company_id = $1 AND work_batch_id = (SELECT work_batch_id FROM next)
      RETURNING company_id, work_batch_id, work_type, lease_owner, lease_expires_at`,
  ),
  /** The fence of every later write of a run: only the lease owner of a Processing batch renews it. */
  renewBatchLease: statement(
    "renew_batch_lease",
    `UPDATE work_batches SET lease_expires_at = $4
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
  ),
  markItemsInProgress: statement(
    "mark_items_in_progress",
    `UPDATE work_items SET status = 'InProgress', updated_at = $3
      WHERE company_id = $1 AND work_item_id IN (
        SELECT work_item_id FROM work_items
         WHERE company_id = $1 AND work_batch_id = $2
           AND (status = 'InProgress' OR (status = 'New' AND (next_attempt_at IS NULL OR next_attempt_at <= $4)))
         ORDER BY work_item_id LIMIT $5)
      RETURNING company_id, work_batch_id, work_item_id, work_type, request, attempts`,
  ),
  itemSucceeded: statement(
    "item_succeeded",
    `UPDATE work_items SET status = 'Successful', result = $4, error = NULL, next_attempt_at = NULL, last_error = NULL,
            updated_at = $5, completed_at = $5
      WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
      RETURNING webhook_url`,
  ),
  itemFailed: statement(
    "item_failed",
    `UPDATE work_items SET status = 'Failed', error = $4, attempts = attempts + $5, next_attempt_at = NULL,
            last_error = $6, updated_at = $7, completed_at = $7
      WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
      RETURNING webhook_url`,
  ),
  itemRetried: statement(
    "item_retried",
    `UPDATE work_items SET status = 'New', attempts = attempts + 1, next_attempt_at = $4, last_error = $5, updated_at = $6
      WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
      RETURNING webhook_url`,
  ),
  /** Holds the batch: the lease check and the completion or release that follows are one step. */
  lockBatchLease: statement(
    "lock_batch_lease",
    (d) => `SELECT status, lease_owner FROM work_batches WHERE company_id = $1 AND work_batch_id = $2${d.forUpdate}`,
  ),
  waitingItems: statement(
    "waiting_items",
    `SELECT COUNT(*) AS waiting, MIN(COALESCE(next_attempt_at, $3)) AS next_run_at FROM work_items
      WHERE company_id = $1 AND work_batch_id = $2 AND status IN ('New', 'InProgress')`,
  ),
  completeBatch: statement(
    "complete_batch",
    `UPDATE work_batches SET status = 'Completed', completed_at = $4, lease_owner = NULL, lease_expires_at = NULL,
            next_run_at = NULL, last_error = NULL
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
  ),
  releaseBatch: statement(
    "release_batch",
    `UPDATE work_batches SET lease_owner = NULL, lease_expires_at = NULL, next_run_at = $4, last_error = $5
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
  ),

  insertOutboxRow: statement(
    "insert_outbox_row",
    `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, 'Pending', $6, $6)`,
  ),
  /** Across companies, the dispatcher's sweep step 1: companies with due deliveries, the longest waiting first. */
  companiesWithDueDeliveries: statement(
    "companies_with_due_deliveries",
    `SELECT company_id FROM webhook_outbox WHERE status = 'Pending' AND next_attempt_at <= $1
      GROUP BY company_id ORDER BY MIN(next_attempt_at), company_id LIMIT $2`,
  ),
  /**
   * The company's due deliveries, oldest first: the claim pushes next_attempt_at to the lease's
   * end, so a dispatcher that dies leaves them due again later.
   */
  claimWebhookDeliveries: statement(
    "claim_webhook_deliveries",
    (d) => `WITH due AS (
       SELECT event_id FROM webhook_outbox
        WHERE company_id = $1 AND status = 'Pending' AND next_attempt_at <= $3
        ORDER BY next_attempt_at LIMIT $5${d.forUpdateSkipLocked})
     UPDATE webhook_outbox SET lease_owner = $2, next_attempt_at = $4
      WHERE company_id = $1 AND event_id IN (SELECT event_id FROM due)
      RETURNING ${OUTBOX_COLUMNS}`,
  ),
  recordWebhookAttempt: statement(
    "record_webhook_attempt",
    `UPDATE webhook_outbox SET status = $4, attempts = attempts + 1, next_attempt_at = COALESCE($5, next_attempt_at),
            lease_owner = NULL, last_status = $6, last_error = $7, delivered_at = $8
      WHERE company_id = $1 AND event_id = $2 AND status = 'Pending' AND lease_owner = $3`,
  ),
  /** Across companies, for the operator's backlog gauge: deliveries still to make, per company. */
  pendingDeliveriesByCompany: statement(
    "pending_deliveries_by_company",
    "SELECT company_id, COUNT(*) AS pending FROM webhook_outbox WHERE status = 'Pending' GROUP BY company_id",
  ),
} as const;
