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
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at, application_number, registration_number,
  submitted_at, decided_at, deadline_at, kind, original_work_item_id, revision`;
/** An item's columns and where it stands in the queue, as a change returns them (store/core/transition.ts). */
export const MOVED_COLUMNS = `${ITEM_COLUMNS}, next_attempt_at, claimed_by, polls`;
const KEY_COLUMNS = "key_id, company_id, name, created_at, revoked_at";
const OUTBOX_COLUMNS = "company_id, delivery_id, event_id, work_item_id, event_type, url, attempts, created_at";

export const HISTORY_COLUMNS = "company_id, work_item_id, at, kind, status, detail, operator_id, operator_email, reason";

export const SQL = {
  insertHistory: statement(
    "insert_history",
    `INSERT INTO work_item_history (${HISTORY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  ),
  insertCompany: statement("insert_company", "INSERT INTO companies (company_id, name, created_at) VALUES ($1, $2, $3) RETURNING company_id, name, created_at"),
  /** Across companies, admin only: the next free id for `companies create` without one. */
  nextCompanyId: statement("next_company_id", "SELECT COALESCE(MAX(company_id), 0) + 1 AS company_id FROM companies"),
  getCompany: statement("get_company", "SELECT company_id, name, created_at FROM companies WHERE company_id = $1"),
  renameCompany: statement("rename_company", "UPDATE companies SET name = $2 WHERE company_id = $1 RETURNING company_id, name, created_at"),

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

  getWebhookSecrets: statement(
    "get_webhook_secrets",
    "SELECT webhook_secret, webhook_secret_previous, webhook_secret_previous_until FROM companies WHERE company_id = $1",
  ),
  /** One atomic statement, so concurrent first uses agree on the secret. */
  ensureWebhookSecret: statement(
    "ensure_webhook_secret",
    "UPDATE companies SET webhook_secret = COALESCE(webhook_secret, $2) WHERE company_id = $1 RETURNING webhook_secret",
  ),
  /** Holds the company's secrets until commit: a rotation reads the current one, then moves it. */
  lockWebhookSecrets: statement(
    "lock_webhook_secrets",
    (d) => `SELECT webhook_secret FROM companies WHERE company_id = $1${d.forUpdate}`,
  ),
  setWebhookSecrets: statement(
    "set_webhook_secrets",
    "UPDATE companies SET webhook_secret = $2, webhook_secret_previous = $3, webhook_secret_previous_until = $4 WHERE company_id = $1",
  ),
  revokePreviousWebhookSecret: statement(
    "revoke_previous_webhook_secret",
    "UPDATE companies SET webhook_secret_previous = NULL, webhook_secret_previous_until = NULL WHERE company_id = $1",
  ),
  /** Across companies, once at start-up: secrets stored before encryption at rest (they are `whsec_…` as they are). */
  plaintextWebhookSecrets: statement(
    "plaintext_webhook_secrets",
    `SELECT company_id, webhook_secret, webhook_secret_previous FROM companies
      WHERE company_id > $1 AND (substr(webhook_secret, 1, 6) = 'whsec_' OR substr(webhook_secret_previous, 1, 6) = 'whsec_')
      ORDER BY company_id LIMIT $2`,
  ),
  /** Compare-and-set of both secrets: one that changed meanwhile (a rotation) is left as it is now. */
  replaceStoredWebhookSecrets: statement(
    "replace_stored_webhook_secrets",
    `UPDATE companies SET webhook_secret = CASE WHEN webhook_secret = $2 THEN $3 ELSE webhook_secret END,
            webhook_secret_previous = CASE WHEN webhook_secret_previous = $4 THEN $5 ELSE webhook_secret_previous END
      WHERE company_id = $1`,
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

  /** The outcomes of a call, each fenced by the claim: only the item's holder ($3) moves it. */
  itemSubmitted: statement(
    "item_submitted",
    `UPDATE work_items SET status = 'Submitted', claimed_by = NULL, application_number = $4, submitted_at = $5, next_attempt_at = $6,
            polls = 0, last_error = NULL, updated_at = $7
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status = 'InProgress'
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** RETURNING the polls before this one: the first pending answer is announced. */
  itemPending: statement(
    "item_pending",
    `UPDATE work_items SET claimed_by = NULL, polls = polls + 1, next_attempt_at = $4, last_error = $5, updated_at = $6
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status = 'Submitted'
      RETURNING ${ITEM_COLUMNS}, next_attempt_at, claimed_by, polls - 1 AS polls`,
  ),
  itemSucceeded: statement(
    "item_succeeded",
    `UPDATE work_items SET status = 'Successful', claimed_by = NULL, result = $4, registration_number = $5, decided_at = $6, error = NULL,
            next_attempt_at = NULL, last_error = NULL, updated_at = $6, completed_at = $6
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status IN ('InProgress', 'Submitted')
      RETURNING ${MOVED_COLUMNS}`,
  ),
  itemFailed: statement(
    "item_failed",
    `UPDATE work_items SET status = 'Failed', claimed_by = NULL, error = $4, attempts = attempts + $5, decided_at = $6, next_attempt_at = NULL,
            last_error = $7, updated_at = $8, completed_at = $8
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status IN ('InProgress', 'Submitted')
      RETURNING ${MOVED_COLUMNS}`,
  ),
  itemRetried: statement(
    "item_retried",
    `UPDATE work_items SET status = 'New', claimed_by = NULL, attempts = attempts + 1, next_attempt_at = $4, last_error = $5, updated_at = $6
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status = 'InProgress'
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /**
   * Flags the company's items still waiting to be filed whose deadline is near, once; they are
   * only in batches that are not Completed.
   */
  flagDeadlinesAtRisk: statement(
    "flag_deadlines_at_risk",
    `UPDATE work_items SET deadline_risk_at = $3
      WHERE company_id = $1
        AND work_batch_id IN (SELECT work_batch_id FROM work_batches WHERE company_id = $1 AND status <> 'Completed')
        AND status IN ('New', 'InProgress') AND deadline_at <= $2 AND deadline_risk_at IS NULL
      RETURNING ${ITEM_COLUMNS}`,
  ),

  insertOutboxRow: statement(
    "insert_outbox_row",
    `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, 'Pending', $6, $6)`,
  ),
  /** Across companies, the dispatcher's sweep step 1: companies with due deliveries, the longest waiting first. */
  /**
   * Companies with deliveries due at $1 and fewer than $3 in flight (claimed, lease not over),
   * those with the fewest in flight first, then the longest waiting: companies take turns, and
   * one whose receiver hangs cannot keep the others out. Both branches walk the Pending index.
   */
  companiesWithDueDeliveries: statement(
    "companies_with_due_deliveries",
    `SELECT company_id FROM (
         SELECT company_id, next_attempt_at AS due_at, 0 AS in_flight FROM webhook_outbox
          WHERE status = 'Pending' AND next_attempt_at <= $1
         UNION ALL
         SELECT company_id, NULL, 1 FROM webhook_outbox
          WHERE status = 'Pending' AND next_attempt_at > $1 AND lease_owner IS NOT NULL) pending
      GROUP BY company_id
     HAVING MIN(due_at) IS NOT NULL AND SUM(in_flight) < $3
      ORDER BY SUM(in_flight), MIN(due_at), company_id LIMIT $2`,
  ),
  /**
   * The company's due deliveries, oldest first, as many as $5 and as its cap of $6 in flight
   * leaves room for: the claim pushes next_attempt_at to the lease's end, so a dispatcher that
   * dies leaves them due again later. (A LIMIT below 0 means none in neither store's sense: SQLite
   * reads it as no limit, so it is clamped.)
   */
  claimWebhookDeliveries: statement(
    "claim_webhook_deliveries",
    (d) => `WITH due AS (
       SELECT event_id FROM webhook_outbox
        WHERE company_id = $1 AND status = 'Pending' AND next_attempt_at <= $3
        ORDER BY next_attempt_at
        LIMIT (SELECT CASE WHEN COUNT(*) >= $6 THEN 0 WHEN $6 - COUNT(*) < $5 THEN $6 - COUNT(*) ELSE $5 END
                 FROM webhook_outbox
                WHERE company_id = $1 AND status = 'Pending' AND next_attempt_at > $3 AND lease_owner IS NOT NULL)${d.forUpdateSkipLocked})
     UPDATE webhook_outbox SET lease_owner = $2, next_attempt_at = $4
      WHERE company_id = $1 AND event_id IN (SELECT event_id FROM due)
      RETURNING ${OUTBOX_COLUMNS},
        (SELECT w.trace_parent FROM work_items w WHERE w.company_id = $1 AND w.work_item_id = webhook_outbox.work_item_id) AS trace_parent`,
  ),
  recordWebhookAttempt: statement(
    "record_webhook_attempt",
    `UPDATE webhook_outbox SET status = $4, attempts = attempts + 1, next_attempt_at = COALESCE($5, next_attempt_at),
            lease_owner = NULL, last_status = $6, last_error = $7, delivered_at = COALESCE($8, delivered_at), ended_at = $9
      WHERE company_id = $1 AND delivery_id = $2 AND status = 'Pending' AND lease_owner = $3
      RETURNING attempts`,
  ),
  insertWebhookAttempt: statement(
    "insert_webhook_attempt",
    `INSERT INTO webhook_delivery_attempts (company_id, delivery_id, attempt, at, status_code, error, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
  ),
  /** Due now, unless an attempt is under way: that one goes on, and its lease stays. */
  redeliverWebhook: statement(
    "redeliver_webhook",
    `UPDATE webhook_outbox SET status = 'Pending', ended_at = NULL,
            next_attempt_at = CASE WHEN lease_owner IS NULL THEN $3 ELSE next_attempt_at END
      WHERE company_id = $1 AND delivery_id = $2`,
  ),
  /** Across companies, the delivery retention sweep's step 1: companies with deliveries that ended long enough ago. */
  companiesWithEndedDeliveries: statement(
    "companies_with_ended_deliveries",
    "SELECT DISTINCT company_id FROM webhook_outbox WHERE ended_at <= $1 ORDER BY company_id LIMIT $2",
  ),
  /** Step 2, one company at a time: at most $3 of its ended deliveries; their attempts go with them (ON DELETE CASCADE). */
  deleteEndedDeliveries: statement(
    "delete_ended_deliveries",
    `DELETE FROM webhook_outbox WHERE company_id = $1 AND delivery_id IN (
       SELECT delivery_id FROM webhook_outbox WHERE company_id = $1 AND ended_at <= $2 ORDER BY ended_at LIMIT $3)`,
  ),
  /**
   * The event feed's numbering (SPEC §11.2): moves the company's last position on by $2 and
   * returns it. The row stays locked until the transaction ends, so the company's next writer
   * numbers its events only once these are committed: positions follow commit order.
   */
  advanceEventSequence: statement(
    "advance_event_sequence",
    `INSERT INTO event_sequences (company_id, last_position) VALUES ($1, $2)
     ON CONFLICT (company_id) DO UPDATE SET last_position = event_sequences.last_position + excluded.last_position
     RETURNING last_position`,
  ),
  insertEvent: statement(
    "insert_event",
    "INSERT INTO events (company_id, position, event_id, event_type, work_item_id, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)",
  ),
  /**
   * Across companies, the event sweep's step 1: companies holding events created at or before
   * $1, one index probe per company that ever had an event.
   */
  companiesWithExpiredEvents: statement(
    "companies_with_expired_events",
    `SELECT s.company_id FROM event_sequences s
      WHERE EXISTS (SELECT 1 FROM events e WHERE e.company_id = s.company_id AND e.created_at <= $1)
      ORDER BY s.company_id LIMIT $2`,
  ),
  /** Step 2, one company at a time: at most $3 of its oldest expired events. */
  deleteExpiredEvents: statement(
    "delete_expired_events",
    `DELETE FROM events WHERE company_id = $1 AND position IN (
       SELECT position FROM events WHERE company_id = $1 AND created_at <= $2 ORDER BY created_at LIMIT $3)`,
  ),
  /**
   * Across companies, for the operator's backlog gauge and the overview: deliveries still to
   * make, per company, and how many of them are retrying (their last attempt got no 2xx).
   */
  pendingDeliveriesByCompany: statement(
    "pending_deliveries_by_company",
    `SELECT company_id, COUNT(*) AS pending,
            SUM(CASE WHEN attempts > 0 AND (last_status IS NULL OR last_status NOT BETWEEN 200 AND 299) THEN 1 ELSE 0 END) AS retrying
       FROM webhook_outbox WHERE status = 'Pending' GROUP BY company_id`,
  ),
  /** Across companies, the idempotency sweep's step 1: companies with expired keys. */
  companiesWithExpiredIdempotencyKeys: statement(
    "companies_with_expired_idempotency_keys",
    "SELECT DISTINCT company_id FROM idempotency_keys WHERE created_at <= $1 ORDER BY company_id LIMIT $2",
  ),
  /** Step 2, one company at a time: at most $3 of its expired keys. */
  deleteExpiredIdempotencyKeys: statement(
    "delete_expired_idempotency_keys",
    `DELETE FROM idempotency_keys WHERE company_id = $1 AND idempotency_key IN (
       SELECT idempotency_key FROM idempotency_keys WHERE company_id = $1 AND created_at <= $2 ORDER BY created_at LIMIT $3)`,
  ),
} as const;
