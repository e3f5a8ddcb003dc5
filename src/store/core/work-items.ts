/**
 * The integrator's reads and its cancel (SPEC §3, §5), and the sweep of idempotency keys past
 * their retention (SPEC §4: 24 h; the worker's sweep, SPEC §11.5). The adds are the backends'
 * fast paths (../sqlite/intake-writer.ts, ../postgres/group-commit.ts), a follow-up's add is
 * follow-ups.ts.
 */
import type { DatabasePort, Statement } from "../port.ts";
import { toWorkBatchView, toWorkItemView, type WorkBatchStatusRow, type WorkItemRow } from "../rows.ts";
import type { WorkBatchStatus } from "../../domain/views.ts";
import type { ListWorkItemsQuery, Store } from "../store.ts";
import { workItemViewColumn } from "./item-json.ts";
import { transition } from "./transition.ts";
import { ITEM_COLUMNS, WORK_ITEMS_SQL } from "./sql-work-items.ts";

type WorkItemPart = Pick<
  Store,
  "getWorkItem" | "getWorkItemJson" | "getWorkBatch" | "listWorkItems" | "listWorkItemsJson" | "cancelWorkItem" | "companiesWithExpiredIdempotencyKeys" | "deleteExpiredIdempotencyKeys"
>;

/** A row of a JSON read: the item's id and its view as text, or null when the row needs rows.ts's mapping (core/item-json.ts). */
type ViewRow = { work_item_id: number | string; view: string | null };

export function workItemsStore(db: DatabasePort): WorkItemPart {
  /** The rare row the database left to rows.ts: its view, stringified; undefined when the item went meanwhile (retention). */
  const viewText = async (companyId: number, row: ViewRow): Promise<string | undefined> => {
    const item = await db.one<WorkItemRow>(WORK_ITEMS_SQL.getWorkItem, [companyId, row.work_item_id]);
    return item && JSON.stringify(toWorkItemView(item));
  };

  return {
    async getWorkItem(companyId, workItemId) {
      const row = await db.one<WorkItemRow>(WORK_ITEMS_SQL.getWorkItem, [companyId, workItemId]);
      return row && toWorkItemView(row);
    },

    async getWorkBatch(companyId, workBatchId) {
      return toWorkBatchView(await db.all<WorkBatchStatusRow>(WORK_ITEMS_SQL.getWorkBatch, [companyId, workBatchId]));
    },

    async listWorkItems(companyId, query) {
      const { statement, values } = listWorkItemsStatement(companyId, query, "rows");
      return (await db.all<WorkItemRow>(statement, values)).map(toWorkItemView);
    },

    async getWorkItemJson(companyId, workItemId) {
      const row = await db.one<ViewRow>(GET_WORK_ITEM_JSON, [companyId, workItemId]);
      return row && (row.view ?? (await viewText(companyId, row)));
    },

    async listWorkItemsJson(companyId, query) {
      const { statement, values } = listWorkItemsStatement(companyId, query, "json");
      const rows = await db.all<ViewRow>(statement, values);
      const page: Array<{ workItemId: number; json: string }> = [];
      // Almost every row comes with its view; only the rare one the database leaves to the mapper waits.
      for (const row of rows) {
        const json = row.view ?? (await viewText(companyId, row));
        if (json !== undefined) page.push({ workItemId: Number(row.work_item_id), json });
      }
      return page;
    },

    cancelWorkItem(companyId, workItemId, now) {
      return db.transaction(async (tx) => {
        const batch = await tx.one<{ status: WorkBatchStatus }>(WORK_ITEMS_SQL.lockItemBatch, [companyId, workItemId]);
        if (!batch) return { kind: "notFound" };
        if (batch.status === "Open") {
          const cancelled = await transition(tx, WORK_ITEMS_SQL.cancelWorkItem, [companyId, workItemId, now], {
            companyId,
            now,
            from: "New",
            history: [{ kind: "status", status: "Cancelled", detail: "Cancelled by the integrator" }],
          });
          if (cancelled) return { kind: "cancelled", item: toWorkItemView(cancelled) };
        }
        const current = await tx.one<WorkItemRow & { batch_status: WorkBatchStatus }>(WORK_ITEMS_SQL.getWorkItemWithBatchStatus, [companyId, workItemId]);
        if (!current) return { kind: "notFound" };
        return { kind: "conflict", item: toWorkItemView(current), batchStatus: current.batch_status };
      });
    },

    async companiesWithExpiredIdempotencyKeys({ createdBefore, limit }) {
      const rows = await db.all<{ company_id: number | string }>(WORK_ITEMS_SQL.companiesWithExpiredIdempotencyKeys, [createdBefore, limit]);
      return rows.map((row) => Number(row.company_id));
    },

    deleteExpiredIdempotencyKeys({ companyId, createdBefore, limit }) {
      return db.run(WORK_ITEMS_SQL.deleteExpiredIdempotencyKeys, [companyId, createdBefore, limit]);
    },
  };
}

const FILTERS = [
  ["status", "status"],
  ["kind", "kind"],
  ["originalWorkItemId", "original_work_item_id"],
  ["customerReference", "customer_reference"],
  ["workBatchId", "work_batch_id"],
] as const;

const GET_WORK_ITEM_JSON: Statement = {
  name: "get_work_item_json",
  text: (d) => `SELECT work_item_id, ${workItemViewColumn(d)} FROM work_items WHERE company_id = $1 AND work_item_id = $2`,
};

const listStatements = new Map<string, Statement>();

/**
 * The WorkItems page: one statement per combination of filters, so that each is a plain
 * equality and the cursor a plain range, and the database seeks straight to the page through a
 * (company_id, <filter>, work_item_id) index, however many items the company has.
 *
 * The SQLite status index leaves out New items (its migration 0003). A filter on another status
 * says `status <> 'New'` too, which lets SQLite use that partial index. A filter on New alone
 * goes through the company's batches that are not Completed, the only ones that can hold New
 * items. PostgreSQL's full status index serves both forms alike.
 */
function listWorkItemsStatement(companyId: number, query: ListWorkItemsQuery, shape: "rows" | "json"): { statement: Statement; values: unknown[] } {
  const used = FILTERS.filter(([field]) => query[field] !== undefined);
  const values: unknown[] = [companyId, query.beforeWorkItemId ?? Number.MAX_SAFE_INTEGER, query.limit, ...used.map(([field]) => query[field])];
  const byDeadline = query.deadlineBefore !== undefined;
  if (byDeadline) values.push(query.deadlineBefore);
  const newOnly = used.length === 1 && query.status === "New" && !byDeadline;
  const statusForm = query.status === undefined ? "" : query.status !== "New" ? "_not_new" : newOnly ? "_new_by_batch" : "_new";
  const key = `${used.map(([, column]) => column).join("_")}${statusForm}${byDeadline ? "_deadline" : ""}${shape === "json" ? "_json" : ""}`;
  let statement = listStatements.get(key);
  if (!statement) {
    const conditions = used.map(([, column], index) => ` AND ${column} = $${index + 4}`);
    if (query.status !== undefined && query.status !== "New") conditions.push(" AND status <> 'New'");
    // Items from before deadlines were computed have none, and match no deadline filter.
    if (byDeadline) conditions.push(` AND deadline_at < $${used.length + 4}`);
    if (newOnly) conditions.push(" AND work_batch_id IN (SELECT work_batch_id FROM work_batches WHERE company_id = $1 AND status <> 'Completed')");
    const where = `company_id = $1${conditions.join("")} AND work_item_id < $2`;
    statement = {
      name: `list_work_items${key ? `_${key}` : ""}`,
      text: (d) => `SELECT ${shape === "json" ? `work_item_id, ${workItemViewColumn(d)}` : ITEM_COLUMNS} FROM work_items${newOnly ? d.indexedBy("work_items_by_batch") : ""} WHERE ${where} ORDER BY work_item_id DESC LIMIT $3`,
    };
    listStatements.set(key, statement);
  }
  return { statement, values };
}
