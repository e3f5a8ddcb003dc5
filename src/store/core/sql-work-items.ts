/**
 * The statements of work items as the integrators add, read and cancel them, and the sweep of
 * their idempotency keys. Named and written once for both backends (see ../port.ts); the adds'
 * fast paths are the backends' own (../sqlite/intake-sql.ts, ../postgres/appends.ts).
 *
 * Timestamps travel as ISO 8601 text: SQLite stores and compares that text, PostgreSQL casts it
 * to timestamptz. Every statement of the core names `company_id`, the distribution column
 * (docs/scaling.md). Most filter by it; the few that look across companies say so, and are the
 * first step of a sweep that then goes company by company.
 */
import { statement } from "../port.ts";

export const ITEM_COLUMNS = `work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, created_at, updated_at, completed_at, application_number, registration_number,
  submitted_at, decided_at, deadline_at, kind, original_work_item_id, revision`;
/** An item's columns and where it stands in the queue, as a change returns them (core/transition.ts). */
export const MOVED_COLUMNS = `${ITEM_COLUMNS}, next_attempt_at, claimed_by, polls`;

export const WORK_ITEMS_SQL = {
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
  /**
   * Holds the item's batch until commit: the bot's close waits for a cancel, never half-way. A
   * write that changes nothing (see BATCHES_SQL.holdOpenBatch).
   */
  lockItemBatch: statement(
    "lock_item_batch",
    `UPDATE work_batches SET company_id = company_id
      WHERE company_id = $1 AND work_batch_id = (SELECT i.work_batch_id FROM work_items i WHERE i.company_id = $1 AND i.work_item_id = $2)
      RETURNING status`,
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
  /** Across companies, the idempotency sweep's step 1: companies with expired keys. */
  companiesWithExpiredIdempotencyKeys: statement(
    "companies_with_expired_idempotency_keys",
    "SELECT DISTINCT company_id FROM idempotency_keys WHERE created_at <= $1 ORDER BY company_id LIMIT $2",
    { table: "idempotency_keys", orderBy: ["company_id"], limitParameter: 2 },
  ),
  /** Step 2, one company at a time: at most $3 of its expired keys. */
  deleteExpiredIdempotencyKeys: statement(
    "delete_expired_idempotency_keys",
    `DELETE FROM idempotency_keys WHERE company_id = $1 AND idempotency_key IN (
       SELECT idempotency_key FROM idempotency_keys WHERE company_id = $1 AND created_at <= $2 ORDER BY created_at LIMIT $3)`,
  ),
} as const;
