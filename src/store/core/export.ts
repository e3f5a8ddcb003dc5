/**
 * A company's export (SPEC §22): its items in id order, a keyset page at a time, each with the
 * timeline the operator's item view has (core/operator-reads.ts `timelineOf`), so an exported line
 * is what `GET /api/Operator/WorkItems/{id}` answers. A page costs three statements.
 */
import type { DatabasePort } from "../port.ts";
import { toOperatorWorkItemView, type WorkItemRow } from "../rows.ts";
import type { Store } from "../store.ts";
import { timelineOf, type HistoryRow, type WebhookAttemptRow } from "./operator-reads.ts";
import { EXPORT_SQL } from "./sql-export.ts";

type ExportPart = Pick<Store, "exportWorkItems">;

/** Before any item: the `since` of an export that has none. */
const ALWAYS = "1970-01-01T00:00:00.000Z";

/** Rows grouped by their item, each group in the order the rows came. */
function byItem<R extends { work_item_id: number | string }>(rows: R[]): Map<number, R[]> {
  const groups = new Map<number, R[]>();
  for (const row of rows) {
    const id = Number(row.work_item_id);
    const group = groups.get(id);
    if (group) group.push(row);
    else groups.set(id, [row]);
  }
  return groups;
}

export function exportStore(db: DatabasePort): ExportPart {
  return {
    async exportWorkItems(companyId, { afterWorkItemId, since, limit }) {
      const rows = await db.all<WorkItemRow>(EXPORT_SQL.itemsPage, [companyId, afterWorkItemId, since ?? ALWAYS, limit]);
      if (rows.length === 0) return [];
      const ids = JSON.stringify(rows.map((row) => Number(row.work_item_id)));
      const [history, webhooks] = await Promise.all([
        db.all<HistoryRow & { work_item_id: number | string }>(EXPORT_SQL.historyOf, [companyId, ids]),
        db.all<WebhookAttemptRow & { work_item_id: number | string }>(EXPORT_SQL.webhookAttemptsOf, [companyId, ids]),
      ]);
      const historyOf = byItem(history);
      const webhooksOf = byItem(webhooks);
      return rows.map((row) => {
        const item = toOperatorWorkItemView(row);
        return { item, timeline: timelineOf(item, historyOf.get(item.workItemId) ?? [], webhooksOf.get(item.workItemId) ?? []) };
      });
    },
  };
}
