/**
 * The WorkItems page query. One statement per combination of filters, each prepared once on
 * first use, so every filter is a plain equality and the cursor a plain range: SQLite can then
 * seek straight to the page through (company_id, <filter>, work_item_id) and read only `limit`
 * rows however many items the company has. (A single statement with `:x IS NULL OR col = :x`
 * terms cannot use the filter or the cursor in the index, and scans from the newest item down.)
 *
 * The status index leaves out New items (migration 0003: intake does not pay for it). A filter
 * on another status says `status <> 'New'` too, which is what lets SQLite use that partial
 * index; a filter on status New alone goes through the company's batches that are not
 * Completed, the only ones that can hold New items, and sorts what it finds there.
 */
import type Database from "better-sqlite3";
import type { ListWorkItemsQuery } from "../store.ts";
import type { WorkItemRow } from "../rows.ts";
import { ITEM_COLUMNS } from "./statements.ts";

const NEW = "New";

const FILTERS = [
  ["status", "status"],
  ["customerReference", "customer_reference"],
  ["workBatchId", "work_batch_id"],
] as const;

export function createListWorkItems(db: Database.Database): (companyId: number, query: ListWorkItemsQuery) => WorkItemRow[] {
  const statements = new Map<string, Database.Statement>();
  return (companyId, query) => {
    const params: Record<string, unknown> = {
      company_id: companyId,
      before_id: query.beforeWorkItemId ?? Number.MAX_SAFE_INTEGER,
      limit: query.limit,
    };
    let key = "";
    for (const [field, column] of FILTERS) {
      if (query[field] === undefined) continue;
      key += column;
      params[column] = query[field];
    }
    const newOnly = key === "status" && query.status === NEW;
    if (query.status !== undefined) key += query.status === NEW ? ":New" : ":settled";
    let statement = statements.get(key);
    if (!statement) {
      const filters = FILTERS.filter(([field]) => query[field] !== undefined).map(([, column]) => ` AND ${column} = :${column}`);
      if (query.status !== undefined && query.status !== NEW) filters.push(" AND status <> 'New'");
      if (newOnly) {
        filters.push(` AND work_batch_id IN (SELECT work_batch_id FROM work_batches WHERE company_id = :company_id AND status <> 'Completed')`);
      }
      statement = db.prepare(
        `SELECT ${ITEM_COLUMNS} FROM work_items${newOnly ? " INDEXED BY work_items_by_batch" : ""}
         WHERE company_id = :company_id${filters.join("")} AND work_item_id < :before_id
         ORDER BY work_item_id DESC
         LIMIT :limit`,
      );
      statements.set(key, statement);
    }
    return statement.all(params) as WorkItemRow[];
  };
}
