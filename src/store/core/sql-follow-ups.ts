/**
 * The statements of changes and withdrawals (SPEC §15; core/follow-ups.ts), written once for both
 * backends. Every statement names its company.
 */
import { statement } from "../port.ts";
import { ITEM_COLUMNS, MOVED_COLUMNS } from "./sql-work-items.ts";

export const FOLLOW_UPS_SQL = {
  findIdempotencyKey: statement(
    "follow_up_find_idempotency_key",
    "SELECT request_hash, work_batch_id, work_item_id, created_at FROM idempotency_keys WHERE company_id = $1 AND idempotency_key = $2",
  ),
  deleteIdempotencyKey: statement("follow_up_delete_idempotency_key", "DELETE FROM idempotency_keys WHERE company_id = $1 AND idempotency_key = $2"),
  insertIdempotencyKey: statement(
    "follow_up_insert_idempotency_key",
    "INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
  ),


  /**
   * The original, held until commit (by a write that changes nothing: see
   * BATCHES_SQL.holdOpenBatch), with its batch's state and its withdrawals that have not failed.
   */
  lockOriginal: statement(
    "lock_original",
    `UPDATE work_items SET company_id = company_id WHERE company_id = $1 AND work_item_id = $2
      RETURNING ${ITEM_COLUMNS},
        (SELECT b.status FROM work_batches b WHERE b.company_id = $1 AND b.work_batch_id = work_items.work_batch_id) AS batch_status,
        (SELECT COUNT(*) FROM work_items w WHERE w.company_id = $1 AND w.original_work_item_id = $2 AND w.kind = 'withdraw'
            AND w.status NOT IN ('Failed', 'Cancelled')) AS withdrawals_pending`,
  ),
  insertFollowUp: statement(
    "insert_follow_up",
    (d) => `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url, request,
       deadline_at, created_at, updated_at, kind, original_work_item_id, trace_parent, store_generation, generation_id, work_item_id)
     VALUES ($1, $2, $3, 'New', $4, $5, $6, $7, $8, $9, $9, $10, $11, $12, ${d.storeGeneration}, ${d.generationId}, ${d.newId("work_items")}) RETURNING work_item_id`,
  ),
  /** Applied before the original was filed: Successful at once, with result $3. */
  followUpSucceeded: statement(
    "follow_up_succeeded",
    `UPDATE work_items SET status = 'Successful', result = $3, updated_at = $4, completed_at = $4
      WHERE company_id = $1 AND work_item_id = $2 AND status = 'New'
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** The bot's change or withdraw item, while it holds it ($3), held until commit. */
  lockClaimedFollowUp: statement(
    "lock_claimed_follow_up",
    `UPDATE work_items SET company_id = company_id WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status = 'InProgress'
      RETURNING ${ITEM_COLUMNS}`,
  ),
  claimedFollowUpSucceeded: statement(
    "claimed_follow_up_succeeded",
    `UPDATE work_items SET status = 'Successful', claimed_by = NULL, result = $4, error = NULL, decided_at = $5, next_attempt_at = NULL,
            last_error = NULL, updated_at = $5, completed_at = $5
      WHERE company_id = $1 AND work_item_id = $2 AND claimed_by = $3 AND status = 'InProgress'
      RETURNING ${MOVED_COLUMNS}`,
  ),

  originalRequest: statement("original_request", "SELECT request FROM work_items WHERE company_id = $1 AND work_item_id = $2"),
  /** The original takes a change: its document $3, a revision more, and its deadline $4 when the change moved it before filing. */
  changeOriginal: statement(
    "change_original",
    `UPDATE work_items SET request = $3, revision = revision + 1, deadline_at = COALESCE($4, deadline_at), updated_at = $5
      WHERE company_id = $1 AND work_item_id = $2
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** The Authority accepted the withdrawal: no more status requests. */
  withdrawOriginal: statement(
    "withdraw_original",
    `UPDATE work_items SET status = 'Withdrawn', claimed_by = NULL, next_attempt_at = NULL, updated_at = $3, completed_at = COALESCE(completed_at, $3)
      WHERE company_id = $1 AND work_item_id = $2 AND status IN ('Submitted', 'Successful')
      RETURNING ${MOVED_COLUMNS}`,
  ),
} as const;
