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

  /** Test support: row totals across all companies. */
  countRows: named(
    "count_rows",
    `SELECT (SELECT COUNT(*) FROM companies)::int AS companies, (SELECT COUNT(*) FROM api_keys)::int AS api_keys,
            (SELECT COUNT(*) FROM work_batches)::int AS work_batches, (SELECT COUNT(*) FROM work_items)::int AS work_items,
            (SELECT COUNT(*) FROM idempotency_keys)::int AS idempotency_keys`,
  ),
} as const satisfies Record<string, Statement>;

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
