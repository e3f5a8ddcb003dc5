/**
 * The WorkItems page query. One statement per combination of filters, each prepared once on
 * first use, so every filter is a plain equality and the cursor a plain range: SQLite can then
 * seek straight to the page through (company_id, <filter>, work_item_id) and read only `limit`
 * rows however many items the company has. (A single statement with `:x IS NULL OR col = :x`
 * terms cannot use the filter or the cursor in the index, and scans from the newest item down.)
 */
import type Database from "better-sqlite3";
import type { ListWorkItemsQuery } from "../store.ts";
import type { WorkItemRow } from "../rows.ts";
import { ITEM_COLUMNS } from "./statements.ts";

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
    let statement = statements.get(key);
    if (!statement) {
      const filters = FILTERS.filter(([field]) => query[field] !== undefined).map(([, column]) => ` AND ${column} = :${column}`);
      statement = db.prepare(
        `SELECT ${ITEM_COLUMNS} FROM work_items
         WHERE company_id = :company_id${filters.join("")} AND work_item_id < :before_id
         ORDER BY work_item_id DESC
         LIMIT :limit`,
      );
      statements.set(key, statement);
    }
    return statement.all(params) as WorkItemRow[];
  };
}
