/**
 * The statements of a batch's status (core/batches.ts), written once for both backends (see
 * ../port.ts). Intake's SQLite fast path prepares `closeBatch` from here too
 * (../sqlite/intake-statements.ts).
 */
import { statement } from "../port.ts";

/** Paused work types (SPEC §12.2) keep their batches Open: the bot takes none of them up. */
const NOT_PAUSED = "NOT EXISTS (SELECT 1 FROM bot_pauses p WHERE p.work_type = work_batches.work_type)";

export const BATCHES_SQL = {
  /**
   * Holds the company's Open batch of the work type: intake appends to it under the same lock. A
   * write that changes nothing, not SELECT … FOR UPDATE: Citus serialises only writes with a shard
   * move's cut-over, so a row lock taken by a read can be held on the old placement while the
   * bot's close runs on the new one (docs/scaling.md §3.7).
   */
  holdOpenBatch: statement(
    "hold_open_batch",
    "UPDATE work_batches SET company_id = company_id WHERE company_id = $1 AND work_type = $2 AND status = 'Open' RETURNING work_batch_id, item_count",
  ),
  /** Nothing when another writer opened one meanwhile (the one-Open-batch index); then lock that one. */
  insertOpenBatch: statement(
    "open_batch",
    (d) => `INSERT INTO work_batches (company_id, work_type, status, item_count, created_at, work_batch_id) VALUES ($1, $2, 'Open', 0, $3, ${d.newId("work_batches")})
     ON CONFLICT (company_id, work_type) WHERE status = 'Open' DO NOTHING`,
  ),
  countIntoBatch: statement("count_into_batch", "UPDATE work_batches SET item_count = item_count + 1 WHERE company_id = $1 AND work_batch_id = $2"),
  /** A full Open batch → Closed: the next item opens the next batch. */
  closeBatch: statement("close_batch", "UPDATE work_batches SET status = 'Closed', closed_at = $3 WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Open'"),
  /**
   * The company's non-empty Open batches → Closed, as the bot takes them up. Locked in the order
   * intake locks them (work type, bytewise), so a close and a group of appends never deadlock.
   */
  closeOpenBatches: statement(
    "close_open_batches",
    (d) => `WITH open AS (
       SELECT work_batch_id FROM work_batches
        WHERE company_id = $1 AND status = 'Open' AND item_count > 0 AND ${NOT_PAUSED}
        ORDER BY work_type${d.byteOrder}${d.forUpdate})
     UPDATE work_batches SET status = 'Closed', closed_at = $2
      WHERE company_id = $1 AND work_batch_id IN (SELECT work_batch_id FROM open) AND status = 'Open'`,
  ),
  /** Closed → Processing with $3 items to finish, or straight to Completed when it has none. */
  takeUpBatch: statement(
    "take_up_batch",
    `UPDATE work_batches SET status = CASE WHEN $3 = 0 THEN 'Completed' ELSE 'Processing' END, unfinished_items = $3,
            completed_at = CASE WHEN $3 = 0 THEN $4 ELSE completed_at END
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Closed'`,
  ),
  /** One item of a queued batch finished: the batch completes with its last one. */
  countFinishedItem: statement(
    "count_finished_item",
    `UPDATE work_batches SET unfinished_items = unfinished_items - 1,
            status = CASE WHEN unfinished_items <= 1 THEN 'Completed' ELSE status END,
            completed_at = CASE WHEN unfinished_items <= 1 THEN $3 ELSE completed_at END
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'Processing' AND unfinished_items IS NOT NULL`,
  ),
} as const;
