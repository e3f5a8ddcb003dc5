/**
 * No id comes back (SPEC §22), SQLite's part. A new row of a table without AUTOINCREMENT gets
 * the largest rowid + 1, so once an erase deleted the rows with the largest ids, those ids would
 * be given again: to another company's item, under the idempotency key the authority already
 * knows for the erased one (authority/protocol.ts idempotencyKeyOf). An erase records the largest
 * id it deleted of each table in retired_ids (migration 0023, core/erasure.ts); a new row takes
 * the next id above it while the table's own largest id is below it, and otherwise NULL, which
 * lets SQLite pick the rowid as it always did. Both reads are index lookups (the table's largest
 * rowid is its b-tree's last entry).
 */
import type { RetiredIdTable } from "../port.ts";

const ID_COLUMNS: Record<RetiredIdTable, string> = { work_items: "work_item_id", work_batches: "work_batch_id", webhook_outbox: "delivery_id" };

/** The value of a new row's id in `table`: NULL (SQLite's own choice), or the id above the largest retired one. */
export const newIdAboveRetired = (table: RetiredIdTable) =>
  `(SELECT r.up_to + 1 FROM retired_ids r WHERE r.name = '${table}' AND r.up_to >= ifnull((SELECT max(${ID_COLUMNS[table]}) FROM ${table}), 0))`;
