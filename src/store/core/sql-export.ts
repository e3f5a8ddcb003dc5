/**
 * The statements of a company's export (SPEC §22, core/export.ts): a keyset page of its items in
 * id order, and the history and webhook attempts of a page's items at once. Written once for
 * both backends (see ../port.ts); the timeline they make is the operator's (sql-operator-reads.ts).
 */
import { statement } from "../port.ts";
import { HISTORY_COLUMNS } from "./sql-transition.ts";
import { ITEM_COLUMNS } from "./sql-work-items.ts";

export const EXPORT_SQL = {
  /** Items with an id above $2 added at or after $3, in id order, through the company's id index. */
  itemsPage: statement(
    "export_items_page",
    `SELECT ${ITEM_COLUMNS} FROM work_items WHERE company_id = $1 AND work_item_id > $2 AND created_at >= $3 ORDER BY work_item_id LIMIT $4`,
  ),
  /** The history of the items in $2, each item's in entry order. */
  historyOf: statement(
    "export_history_of",
    (d) => `SELECT ${HISTORY_COLUMNS} FROM work_item_history WHERE company_id = $1 AND work_item_id IN (${d.idList("$2")}) ORDER BY work_item_id, entry_id`,
  ),
  /** The webhook attempts about the items in $2, each item's as the operator's timeline orders them. */
  webhookAttemptsOf: statement(
    "export_webhook_attempts_of",
    (d) => `SELECT o.work_item_id, o.company_id, o.delivery_id, o.event_type, o.url, a.attempt, a.at, a.status_code, a.error, a.duration_ms
       FROM webhook_outbox o JOIN webhook_delivery_attempts a ON a.company_id = o.company_id AND a.delivery_id = o.delivery_id
      WHERE o.company_id = $1 AND o.work_item_id IN (${d.idList("$2")})
      ORDER BY o.work_item_id, a.at, o.delivery_id, a.attempt`,
  ),
} as const;
