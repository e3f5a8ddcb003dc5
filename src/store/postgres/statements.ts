/**
 * Every SQL statement of the PostgreSQL store, in one place. Each has a name, so `pg` prepares
 * it once per connection and afterwards sends only the name and the values. Every statement
 * on tenant data filters by company_id (the distribution column, see docs/scaling.md); the
 * exceptions are marked: admin-wide or process-wide statements that run rarely.
 */

/** A named statement; pass it to `pg` together with its values. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

const named = (name: string, text: string): Statement => ({ name: `wia_${name}`, text });

const ITEM_COLUMNS = `work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at`;
const KEY_COLUMNS = "key_id, company_id, name, created_at, revoked_at";

export const SQL = {
  ping: named("ping", "SELECT 1"),

  insertCompany: named("insert_company", "INSERT INTO companies (company_id, name, created_at) VALUES ($1, $2, now()) RETURNING company_id, name, created_at"),
  /** Admin-wide: the next free company id, for `companies create` without `--company-id`. */
  insertCompanyNextId: named(
    "insert_company_next_id",
    `INSERT INTO companies (company_id, name, created_at)
     SELECT COALESCE(MAX(company_id), 0) + 1, $1, now() FROM companies
     RETURNING company_id, name, created_at`,
  ),
  getCompany: named("get_company", "SELECT company_id, name, created_at FROM companies WHERE company_id = $1"),

  insertApiKey: named(
    "insert_api_key",
    `INSERT INTO api_keys (company_id, key_id, name, secret_hash, created_at) VALUES ($1, $2, $3, $4, now()) RETURNING ${KEY_COLUMNS}`,
  ),
  findApiKey: named("find_api_key", `SELECT ${KEY_COLUMNS}, secret_hash FROM api_keys WHERE company_id = $1 AND key_id = $2`),
  listApiKeys: named("list_api_keys", `SELECT ${KEY_COLUMNS} FROM api_keys WHERE company_id = $1 ORDER BY created_at, key_id`),
  /** Admin-wide: `keys revoke --key-id` knows no company (a multi-shard update under Citus). */
  revokeApiKey: named(
    "revoke_api_key",
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE key_id = $1 RETURNING ${KEY_COLUMNS}`,
  ),
  getWebhookSecret: named("get_webhook_secret", "SELECT webhook_secret FROM companies WHERE company_id = $1"),
  setWebhookSecret: named("set_webhook_secret", "UPDATE companies SET webhook_secret = $2 WHERE company_id = $1"),

  /** Process-wide: the first process to get here decides the shared key; everyone reads it back. */
  insertSigningSecret: named(
    "insert_signing_secret",
    "INSERT INTO signing_secrets (name, secret, created_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING",
  ),
  getSigningSecret: named("get_signing_secret", "SELECT secret FROM signing_secrets WHERE name = $1"),

  /** One group of appends (group commit); the per-item logic lives in migrations/0001_initial.sql. */
  addWorkItems: named("add_work_items", "SELECT item_ord, outcome, batch_id, item_id, failure_code, failure_message FROM wia_add_work_items($1::json, $2::text[])"),

  getWorkItem: named("get_work_item", `SELECT ${ITEM_COLUMNS} FROM work_items WHERE company_id = $1 AND work_item_id = $2`),
  getWorkBatch: named(
    "get_work_batch",
    `SELECT b.work_batch_id, b.work_type, b.status, b.created_at, b.closed_at, b.completed_at,
            COALESCE((SELECT json_agg(json_build_object('status', s.status, 'count', s.n))
                        FROM (SELECT i.status, COUNT(*) AS n FROM work_items i
                               WHERE i.company_id = b.company_id AND i.work_batch_id = b.work_batch_id
                               GROUP BY i.status) s), '[]'::json) AS status_counts
       FROM work_batches b
      WHERE b.company_id = $1 AND b.work_batch_id = $2`,
  ),

  ...lifecycleStatements(),

  /** Test support: row totals across all companies. */
  countRows: named(
    "count_rows",
    `SELECT (SELECT COUNT(*) FROM companies)::int AS companies, (SELECT COUNT(*) FROM api_keys)::int AS api_keys,
            (SELECT COUNT(*) FROM work_batches)::int AS work_batches, (SELECT COUNT(*) FROM work_items)::int AS work_items,
            (SELECT COUNT(*) FROM idempotency_keys)::int AS idempotency_keys`,
  ),
} as const satisfies Record<string, Statement>;

/**
 * Cancelling, the bot's batch leases and item outcomes, and the webhook outbox (migration 0002).
 * The twins of sqlite/statements.ts's lifecycle statements. Timestamps come in as ISO strings
 * and are compared as timestamptz. Sweeps across companies are the bot's and the dispatcher's
 * job and are marked; every per-row statement carries company_id.
 */
function lifecycleStatements() {
  return {
    /** Locks the item's batch row FOR SHARE: closing it (an UPDATE) waits until the cancel commits. */
    lockItemBatch: named(
      "lock_item_batch",
      `SELECT b.status FROM work_batches b
        WHERE b.company_id = $1
          AND b.work_batch_id = (SELECT i.work_batch_id FROM work_items i WHERE i.company_id = $1 AND i.work_item_id = $2)
          FOR SHARE`,
    ),
    cancelWorkItem: named(
      "cancel_work_item",
      `UPDATE work_items SET status = 'Cancelled', updated_at = $3, completed_at = $3
        WHERE company_id = $1 AND work_item_id = $2 AND status = 'New'
        RETURNING ${ITEM_COLUMNS}`,
    ),
    getWorkItemWithBatchStatus: named(
      "get_work_item_with_batch_status",
      `SELECT ${ITEM_COLUMNS.replace(/(\w+)/g, "i.$1")}, b.status AS batch_status
         FROM work_items i JOIN work_batches b ON b.company_id = i.company_id AND b.work_batch_id = i.work_batch_id
        WHERE i.company_id = $1 AND i.work_item_id = $2`,
    ),
    /**
     * Bot sweep across companies. The rows are locked in the order intake locks them
     * (company, then work type; see wia_add_work_items), so a close and a group of appends never
     * deadlock; a batch an append holds is waited for and re-checked once it commits.
     */
    closeOpenBatches: named(
      "close_open_batches",
      `WITH open AS (
         SELECT company_id, work_batch_id FROM work_batches
          WHERE status = 'Open' AND item_count > 0
          ORDER BY company_id, work_type COLLATE "C"
            FOR UPDATE)
       UPDATE work_batches b SET status = 'Closed', closed_at = $1
         FROM open
        WHERE b.company_id = open.company_id AND b.work_batch_id = open.work_batch_id AND b.status = 'Open'`,
    ),
    /** Bot sweep: the oldest claimable batch of any company; SKIP LOCKED keeps two claimers apart. */
    claimBatch: named(
      "claim_batch",
      `WITH next AS (
         SELECT company_id, work_batch_id FROM work_batches
          WHERE status = 'Closed'
             OR (status = 'Processing' AND (lease_expires_at IS NULL OR lease_expires_at <= $2)
                 AND (next_run_at IS NULL OR next_run_at <= $2))
          ORDER BY work_batch_id LIMIT 1
            FOR UPDATE SKIP LOCKED)
       UPDATE work_batches b SET status = 'Processing', lease_owner = $1, lease_expires_at = $3, next_run_at = NULL
         FROM next
        WHERE b.company_id = next.company_id AND b.work_batch_id = next.work_batch_id
        RETURNING b.company_id, b.work_batch_id, b.work_type, b.lease_owner, b.lease_expires_at`,
    ),
    /** The fence of every later write of a run: only the lease owner of a Processing batch renews it. */
    renewBatchLease: named(
      "renew_batch_lease",
      `UPDATE work_batches SET lease_expires_at = $4
        WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
    ),
    markItemsInProgress: named(
      "mark_items_in_progress",
      `UPDATE work_items SET status = 'InProgress', updated_at = $3
        WHERE company_id = $1 AND work_item_id IN (
          SELECT work_item_id FROM work_items
           WHERE company_id = $1 AND work_batch_id = $2
             AND (status = 'InProgress' OR (status = 'New' AND (next_attempt_at IS NULL OR next_attempt_at <= $4)))
           ORDER BY work_item_id LIMIT $5)
        RETURNING company_id, work_batch_id, work_item_id, work_type, request, attempts`,
    ),
    itemSucceeded: named(
      "item_succeeded",
      `UPDATE work_items SET status = 'Successful', result = $4, error = NULL, next_attempt_at = NULL, last_error = NULL,
              updated_at = $5, completed_at = $5
        WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
        RETURNING webhook_url`,
    ),
    itemFailed: named(
      "item_failed",
      `UPDATE work_items SET status = 'Failed', error = $4, attempts = attempts + $5, next_attempt_at = NULL,
              last_error = $6, updated_at = $7, completed_at = $7
        WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
        RETURNING webhook_url`,
    ),
    itemRetry: named(
      "item_retry",
      `UPDATE work_items SET status = 'New', attempts = attempts + 1, next_attempt_at = $4, last_error = $5, updated_at = $6
        WHERE company_id = $1 AND work_batch_id = $2 AND work_item_id = $3 AND status = 'InProgress'
        RETURNING webhook_url`,
    ),
    insertOutboxRow: named(
      "insert_outbox_row",
      `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at)
       VALUES ($1, $2, $3, $4, $5, 'Pending', $6, $6)`,
    ),
    /** Locked FOR UPDATE: the lease check and the completion or release that follows are one step. */
    lockBatchLease: named(
      "lock_batch_lease",
      "SELECT status, lease_owner FROM work_batches WHERE company_id = $1 AND work_batch_id = $2 FOR UPDATE",
    ),
    waitingItems: named(
      "waiting_items",
      `SELECT COUNT(*)::int AS waiting, MIN(COALESCE(next_attempt_at, $3)) AS next_run_at FROM work_items
        WHERE company_id = $1 AND work_batch_id = $2 AND status IN ('New', 'InProgress')`,
    ),
    completeBatch: named(
      "complete_batch",
      `UPDATE work_batches SET status = 'Completed', completed_at = $4, lease_owner = NULL, lease_expires_at = NULL,
              next_run_at = NULL, last_error = NULL
        WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
    ),
    releaseBatch: named(
      "release_batch",
      `UPDATE work_batches SET lease_owner = NULL, lease_expires_at = NULL, next_run_at = $4, last_error = $5
        WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND lease_owner = $3`,
    ),
    /** One atomic statement, so concurrent first uses agree on the secret. */
    ensureWebhookSecret: named(
      "ensure_webhook_secret",
      "UPDATE companies SET webhook_secret = COALESCE(webhook_secret, $2) WHERE company_id = $1 RETURNING webhook_secret",
    ),
    /** Dispatcher sweep across companies: due rows, oldest first; SKIP LOCKED keeps two claimers apart. */
    claimWebhookDeliveries: named(
      "claim_webhook_deliveries",
      `WITH due AS (
         SELECT company_id, event_id FROM webhook_outbox
          WHERE status = 'Pending' AND next_attempt_at <= $2
          ORDER BY next_attempt_at LIMIT $4
            FOR UPDATE SKIP LOCKED)
       UPDATE webhook_outbox o SET lease_owner = $1, next_attempt_at = $3
         FROM due
        WHERE o.company_id = due.company_id AND o.event_id = due.event_id
        RETURNING o.company_id, o.event_id, o.work_item_id, o.event_type, o.url, o.attempts, o.created_at`,
    ),
    recordWebhookAttempt: named(
      "record_webhook_attempt",
      `UPDATE webhook_outbox SET status = $4, attempts = attempts + 1, next_attempt_at = COALESCE($5, next_attempt_at),
              lease_owner = NULL, last_status = $6, last_error = $7, delivered_at = $8
        WHERE company_id = $1 AND event_id = $2 AND status = 'Pending' AND lease_owner = $3`,
    ),
    /** Operator gauge across companies: outbox rows still to deliver (the partial index holds exactly these). */
    countPendingWebhookDeliveries: named("count_pending_webhook_deliveries", "SELECT COUNT(*)::int AS pending FROM webhook_outbox WHERE status = 'Pending'"),
  } satisfies Record<string, Statement>;
}

/** Which optional filters a WorkItems listing uses; each combination is its own statement. */
export interface ListFilters {
  status: boolean;
  customerReference: boolean;
  workBatchId: boolean;
  beforeWorkItemId: boolean;
}

const listStatements = new Map<string, Statement>();

/**
 * The listing for one combination of filters, with only the conditions it needs, so each of the
 * 16 variants gets a plan that walks the matching (company_id, …, work_item_id) index backwards.
 * Values: $1 company_id, $2 limit, then the used filters in the order of `ListFilters`.
 */
export function listWorkItemsStatement(filters: ListFilters): Statement {
  const flags = `${+filters.status}${+filters.customerReference}${+filters.workBatchId}${+filters.beforeWorkItemId}`;
  let statement = listStatements.get(flags);
  if (!statement) {
    const conditions = ["company_id = $1"];
    let next = 3;
    if (filters.status) conditions.push(`status = $${next++}`);
    if (filters.customerReference) conditions.push(`customer_reference = $${next++}`);
    if (filters.workBatchId) conditions.push(`work_batch_id = $${next++}`);
    if (filters.beforeWorkItemId) conditions.push(`work_item_id < $${next++}`);
    statement = named(
      `list_work_items_${flags}`,
      `SELECT ${ITEM_COLUMNS} FROM work_items WHERE ${conditions.join(" AND ")} ORDER BY work_item_id DESC LIMIT $2`,
    );
    listStatements.set(flags, statement);
  }
  return statement;
}
