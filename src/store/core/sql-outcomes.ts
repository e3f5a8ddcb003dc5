/**
 * The statements of what a call to the authority made of an item (core/outcomes.ts), named and
 * written once for both backends (see ../port.ts).
 */
import { statement } from "../port.ts";
import { ITEM_COLUMNS, MOVED_COLUMNS } from "./sql-work-items.ts";

export const OUTCOMES_SQL = {
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
} as const;
