/**
 * The statements of a company's erase (SPEC §22, core/company-erasure.ts), named and written once
 * for both backends (see ../port.ts). Every statement on the company's data names it; the erase's
 * own record (company_erasures) and its audit entry are the operators', not the company's.
 */
import { statement, type Statement } from "../port.ts";

const ERASURE_COLUMNS = "company_id, phase, started_at, keys_revoked_at, items, operator_id, operator_email, reason";

/** Deletes up to $2 of the company's rows of `table`, picked by `key` (a column, or a row of columns). */
const someRows = (name: string, table: string, key: string, where = ""): Statement =>
  statement(name, `DELETE FROM ${table} WHERE company_id = $1 AND ${key} IN (SELECT ${key.replace(/[()]/g, "")} FROM ${table} WHERE company_id = $1${where} LIMIT $2)`);

/** Deletes all the company's rows of a table that holds a few per company. */
const allRows = (name: string, table: string): Statement => statement(name, `DELETE FROM ${table} WHERE company_id = $1`);

export const COMPANY_ERASURE_SQL = {
  insertErasure: statement(
    "insert_company_erasure",
    "INSERT INTO company_erasures (company_id, phase, started_at, operator_id, operator_email, reason) VALUES ($1, 'revoking', $2, $3, $4, $5)",
  ),
  getErasure: statement("get_company_erasure", `SELECT ${ERASURE_COLUMNS} FROM company_erasures WHERE company_id = $1`),
  listErasures: statement("list_company_erasures", `SELECT ${ERASURE_COLUMNS} FROM company_erasures ORDER BY started_at, company_id`),
  lastErased: statement(
    "last_company_erased",
    "SELECT company_id, items, at FROM audit_log WHERE action = 'company.erased' AND company_id = $1 ORDER BY audit_id DESC LIMIT 1",
  ),

  /** Revoking (and each round of draining, for a key made meanwhile): the company's keys stop working. */
  revokeKeys: statement("erase_revoke_keys", "UPDATE api_keys SET revoked_at = $2 WHERE company_id = $1 AND revoked_at IS NULL"),
  keysRevoked: statement("erasure_keys_revoked", "UPDATE company_erasures SET phase = 'draining', keys_revoked_at = $2 WHERE company_id = $1 AND phase = 'revoking'"),

  /** The company's batches that can hold a New item. */
  unfinishedBatches: statement(
    "erase_unfinished_batches",
    "SELECT work_batch_id FROM work_batches WHERE company_id = $1 AND status <> 'Completed' ORDER BY work_batch_id",
  ),
  /** Up to $4 New items of batch $2 cancelled at $3, out of the filing queue. */
  cancelNewItems: statement(
    "erase_cancel_new_items",
    `UPDATE work_items SET status = 'Cancelled', next_attempt_at = NULL, claimed_by = NULL, updated_at = $3, completed_at = $3
      WHERE company_id = $1 AND work_item_id IN (
        SELECT work_item_id FROM work_items WHERE company_id = $1 AND work_batch_id = $2 AND status = 'New' LIMIT $4)`,
  ),
  dropFilingLanes: allRows("erase_filing_lanes", "filing_lanes"),
  dropStatusLanes: allRows("erase_status_lanes", "status_lanes"),
  /** Items a worker holds under a live claim: it may be calling the authority about them. */
  callsInFlight: statement(
    "erase_calls_in_flight",
    `SELECT COUNT(*) AS calls FROM work_items
      WHERE company_id = $1 AND status IN ('InProgress', 'Submitted') AND status <> 'New' AND claimed_by IS NOT NULL AND next_attempt_at > $2`,
  ),

  countItems: statement("erase_count_items", "SELECT COUNT(*) AS items FROM work_items WHERE company_id = $1"),
  largestIds: statement(
    "erase_largest_ids",
    `SELECT (SELECT MAX(work_item_id) FROM work_items WHERE company_id = $1) AS work_items,
            (SELECT MAX(work_batch_id) FROM work_batches WHERE company_id = $1) AS work_batches,
            (SELECT MAX(delivery_id) FROM webhook_outbox WHERE company_id = $1) AS webhook_outbox`,
  ),
  deleting: statement("erasure_deleting", "UPDATE company_erasures SET phase = 'deleting', items = $2 WHERE company_id = $1 AND phase = 'draining'"),

  /**
   * Deleting, in this order: whatever names an item before the items, follow-ups before their
   * originals, items before their batches. Each is one short statement of at most $2 rows.
   */
  deleteSteps: [
    // Their attempts go with them (ON DELETE CASCADE).
    ["webhook_outbox", someRows("erase_company_outbox", "webhook_outbox", "delivery_id")],
    ["events", someRows("erase_company_events", "events", "position")],
    ["work_item_history", someRows("erase_company_history", "work_item_history", "(work_item_id, entry_id)")],
    ["idempotency_keys", someRows("erase_company_idempotency_keys", "idempotency_keys", "idempotency_key")],
    ["work_items", someRows("erase_company_follow_ups", "work_items", "work_item_id", " AND kind <> 'create'")],
    ["work_items", someRows("erase_company_items", "work_items", "work_item_id")],
    ["work_batches", someRows("erase_company_batches", "work_batches", "work_batch_id")],
  ] as ReadonlyArray<readonly [table: string, statement: Statement]>,
  /** A few rows per company, deleted at once after the rest. */
  smallTables: [
    ["filing_lanes", allRows("erase_company_filing_lanes", "filing_lanes")],
    ["status_lanes", allRows("erase_company_status_lanes", "status_lanes")],
    ["company_item_counts", allRows("erase_company_counts", "company_item_counts")],
    ["event_sequences", allRows("erase_company_event_sequence", "event_sequences")],
  ] as ReadonlyArray<readonly [table: string, statement: Statement]>,

  /** Whether any row of the company's big tables came back (a key made while it was erased). */
  anyRowsLeft: statement(
    "erase_any_rows_left",
    `SELECT 1 AS found FROM work_items WHERE company_id = $1
     UNION ALL SELECT 1 FROM work_batches WHERE company_id = $1
     UNION ALL SELECT 1 FROM events WHERE company_id = $1
     UNION ALL SELECT 1 FROM idempotency_keys WHERE company_id = $1
     LIMIT 1`,
  ),
  deleteKeys: allRows("erase_company_keys", "api_keys"),
  deleteCompany: allRows("erase_company", "companies"),
  /** The end of the erase: its record goes, returning what the audit entry keeps. */
  endErasure: statement("end_company_erasure", `DELETE FROM company_erasures WHERE company_id = $1 RETURNING ${ERASURE_COLUMNS}`),
  insertErasedAudit: statement(
    "insert_company_erased_audit",
    "INSERT INTO audit_log (at, operator_id, operator_email, action, company_id, reason, items) VALUES ($1, $2, $3, 'company.erased', $4, $5, $6)",
  ),
} as const;
