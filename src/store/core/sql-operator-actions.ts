/**
 * The statements of what operators do (SPEC §12.2): each action's audit entry, pausing and
 * resuming a work type, retrying a Failed item, and stopping a delivery. Written once for both
 * backends (see ../port.ts). Every write to an item or a delivery is scoped by its company,
 * looked up first (`findDeliveryCompany`, or the item read through operator-reads).
 */
import { statement } from "../port.ts";
import { ITEM_COLUMNS } from "./sql-work-items.ts";

export const OPERATOR_ACTIONS_SQL = {

  insertAudit: statement(
    "insert_audit",
    `INSERT INTO audit_log (at, operator_id, operator_email, action, company_id, work_item_id, work_type, delivery_id, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  ),

  pauseWorkType: statement("pause_work_type", "INSERT INTO bot_pauses (work_type, paused_at) VALUES ($1, $2) ON CONFLICT (work_type) DO NOTHING"),
  resumeWorkType: statement("resume_work_type", "DELETE FROM bot_pauses WHERE work_type = $1"),

  /** Holds a Failed item while it moves to another batch (the batch's count goes up first). */
  lockFailedItem: statement(
    "lock_failed_item",
    "UPDATE work_items SET company_id = company_id WHERE company_id = $1 AND work_item_id = $2 RETURNING status",
  ),
  /** Failed → New in its new batch, as if never filed: the history keeps what happened before. */
  retryItem: statement(
    "retry_item",
    `UPDATE work_items SET status = 'New', work_batch_id = $3, attempts = 0, polls = 0, error = NULL, result = NULL, next_attempt_at = NULL,
            last_error = NULL, application_number = NULL, registration_number = NULL, submitted_at = NULL, decided_at = NULL,
            deadline_risk_at = NULL, claimed_by = NULL, updated_at = $4, completed_at = NULL
      WHERE company_id = $1 AND work_item_id = $2 AND status = 'Failed'
      RETURNING ${ITEM_COLUMNS}`,
  ),
  /** Across companies: a delivery by its id alone. */
  findDeliveryCompany: statement("find_delivery_company", "SELECT company_id FROM webhook_outbox WHERE delivery_id = $1"),
  /**
   * Across companies, Stop retrying (SPEC §16): a pending delivery fails now. Its lease goes too,
   * so an attempt under way finds the row no longer its own and records nothing.
   */
  stopWebhookDelivery: statement(
    "stop_webhook_delivery",
    `UPDATE webhook_outbox SET status = 'Failed', ended_at = $3, lease_owner = NULL, last_error = $4
      WHERE company_id = $1 AND delivery_id = $2 AND status = 'Pending'`,
  ),
} as const;
