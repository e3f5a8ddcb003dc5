/**
 * The statements of a state change's own records (core/transition.ts): the item's history, and
 * its company's counts of items per state. Named and written once for both backends (see
 * ../port.ts); the queue's part of a change is in sql-filing-queue.ts, the batch's in sql-batches.ts.
 */
import { statement } from "../port.ts";

export const HISTORY_COLUMNS = "company_id, work_item_id, at, kind, status, detail, operator_id, operator_email, reason";

export const TRANSITION_SQL = {
  insertHistory: statement(
    "insert_history",
    `INSERT INTO work_item_history (${HISTORY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  ),
  /** The company's count of items in a state moves by $3 (New is not counted; the overview counts it). */
  countItems: statement(
    "count_items",
    `INSERT INTO company_item_counts (company_id, status, item_count) VALUES ($1, $2, $3)
     ON CONFLICT (company_id, status) DO UPDATE SET item_count = company_item_counts.item_count + excluded.item_count`,
  ),
} as const;
