/**
 * The statements of erasing work items (SPEC §22, core/erasure.ts), named and written once for
 * both backends (see ../port.ts). A step's items travel as a JSON array of ids (`Dialect.idList`),
 * and every statement names its company; the one that looks across companies says so.
 */
import { statement, type Statement } from "../port.ts";

/** A statement that deletes the company's rows of `table` that name one of the items in $2. */
const ofItems = (name: string, table: string): Statement =>
  statement(name, (d) => `DELETE FROM ${table} WHERE company_id = $1 AND work_item_id IN (${d.idList("$2")})`);

export const ERASURE_SQL = {
  /**
   * Across companies, the item sweep's step 1: companies holding an item that finished at or
   * before $1, one probe of the finished-items index (migration 0023) per company.
   */
  companiesWithExpiredItems: statement(
    "companies_with_expired_items",
    `SELECT c.company_id FROM companies c
      WHERE EXISTS (SELECT 1 FROM work_items i WHERE i.company_id = c.company_id AND i.completed_at IS NOT NULL AND i.completed_at <= $1)
      ORDER BY c.company_id LIMIT $2`,
    { table: "companies", colocated: ["work_items"], orderBy: ["company_id"], limitParameter: 2 },
  ),
  /**
   * Step 2: up to $3 of the company's creates finished at or before $2, oldest first, whose
   * changes and withdrawals all finished by then too, locked until the step commits (an
   * operator's retry or a new follow-up waits, then finds the item gone).
   */
  expiredOriginals: statement(
    "expired_originals",
    (d) => `WITH expired AS (
       SELECT i.work_item_id FROM work_items i
        WHERE i.company_id = $1 AND i.completed_at IS NOT NULL AND i.completed_at <= $2 AND i.kind = 'create'
          AND NOT EXISTS (SELECT 1 FROM work_items f WHERE f.company_id = $1 AND f.original_work_item_id = i.work_item_id
                            AND (f.completed_at IS NULL OR f.completed_at > $2))
        ORDER BY i.completed_at, i.work_item_id LIMIT $3${d.forUpdate})
     UPDATE work_items SET company_id = company_id
      WHERE company_id = $1 AND work_item_id IN (SELECT work_item_id FROM expired) AND completed_at IS NOT NULL AND completed_at <= $2
      RETURNING work_item_id, status, work_batch_id, created_at`,
  ),
  /** The changes and withdrawals of the originals in $2, locked, with what tells whether they may go. */
  followUpsOf: statement(
    "follow_ups_of",
    (d) => `UPDATE work_items SET company_id = company_id
      WHERE company_id = $1 AND original_work_item_id IN (${d.idList("$2")})
      RETURNING work_item_id, original_work_item_id, status, work_batch_id, created_at, completed_at`,
  ),
  /** SQLite only (StoreFlags.reusesIds): the largest delivery id of the items, to retire before they go. */
  largestDeliveryOf: statement(
    "largest_delivery_of",
    (d) => `SELECT MAX(delivery_id) AS id FROM webhook_outbox WHERE company_id = $1 AND work_item_id IN (${d.idList("$2")})`,
  ),
  /** The outbox rows of the items; their attempts go with them (ON DELETE CASCADE). */
  deleteOutboxRows: ofItems("erase_outbox_rows", "webhook_outbox"),
  deleteEvents: ofItems("erase_events", "events"),
  deleteHistory: ofItems("erase_history", "work_item_history"),
  /** Only run for items added within an idempotency key's retention: older keys have expired and are the key sweep's. */
  deleteIdempotencyKeys: ofItems("erase_idempotency_keys", "idempotency_keys"),
  /** The items themselves, follow-ups and their originals in one statement (the foreign key is checked at its end). */
  deleteItems: ofItems("erase_items", "work_items"),
  /** The batch has $3 items fewer. */
  uncountFromBatch: statement("uncount_from_batch", "UPDATE work_batches SET item_count = item_count - $3 WHERE company_id = $1 AND work_batch_id = $2"),
  /** A batch that is no longer Open goes with its last item. */
  deleteEmptyBatch: statement(
    "delete_empty_batch",
    `DELETE FROM work_batches WHERE company_id = $1 AND work_batch_id = $2 AND status <> 'Open'
        AND NOT EXISTS (SELECT 1 FROM work_items i WHERE i.company_id = $1 AND i.work_batch_id = $2)`,
  ),
  /**
   * SQLite only (StoreFlags.reusesIds): ids up to $2 of table $1 are never given again. Not
   * tenant data: one number per table.
   */
  retireIds: statement(
    "retire_ids",
    "INSERT INTO retired_ids (name, up_to) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET up_to = max(up_to, excluded.up_to)",
  ),
} as const;
