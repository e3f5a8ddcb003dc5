/**
 * The statements of webhooks (SPEC §6, §10): each company's signing secrets, and the outbox the
 * dispatcher delivers from with its attempts. Named and written once for both backends (see
 * ../port.ts); the few that look across companies are the first step of a sweep, and say so.
 */
import { statement } from "../port.ts";

const OUTBOX_COLUMNS = "company_id, delivery_id, event_id, work_item_id, event_type, url, attempts, created_at";

export const WEBHOOKS_SQL = {
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
    "UPDATE companies SET company_id = company_id WHERE company_id = $1 RETURNING webhook_secret",
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
  /** Across companies, the dispatcher's sweep step 1: companies with due deliveries, the longest waiting first. */
  /**
   * Companies with deliveries due at $1 and fewer than $3 in flight (claimed, lease not over),
   * those with the fewest in flight first, then the longest waiting: companies take turns, and
   * one whose receiver hangs cannot keep the others out. Both branches walk the Pending index.
   */
  companiesWithDueDeliveries: statement(
    "companies_with_due_deliveries",
    `SELECT company_id, SUM(in_flight) AS in_flight_count, MIN(due_at) AS first_due_at FROM (
         SELECT company_id, next_attempt_at AS due_at, 0 AS in_flight FROM webhook_outbox
          WHERE status = 'Pending' AND next_attempt_at <= $1
         UNION ALL
         SELECT company_id, NULL, 1 FROM webhook_outbox
          WHERE status = 'Pending' AND next_attempt_at > $1 AND lease_owner IS NOT NULL) pending
      GROUP BY company_id
     HAVING MIN(due_at) IS NOT NULL AND SUM(in_flight) < $3
      ORDER BY SUM(in_flight), MIN(due_at), company_id LIMIT $2`,
    { table: "webhook_outbox", orderBy: ["in_flight_count", "first_due_at", "company_id"], limitParameter: 2 },
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
    { table: "webhook_outbox", orderBy: ["company_id"], limitParameter: 2 },
  ),
  /** Step 2, one company at a time: at most $3 of its ended deliveries; their attempts go with them (ON DELETE CASCADE). */
  deleteEndedDeliveries: statement(
    "delete_ended_deliveries",
    `DELETE FROM webhook_outbox WHERE company_id = $1 AND delivery_id IN (
       SELECT delivery_id FROM webhook_outbox WHERE company_id = $1 AND ended_at <= $2 ORDER BY ended_at LIMIT $3)`,
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
    { table: "webhook_outbox", orderBy: [] },
  ),
} as const;
