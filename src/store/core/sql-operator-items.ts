/**
 * The statements of the operators' list of work items across companies (SPEC §25), written once
 * for both backends (../port.ts). A page is read segment by segment of its order
 * (domain/item-order.ts): the newest-first list is one segment; the deadline order has four, the
 * unfinished items with a deadline, then without, then the finished ones likewise. Each segment
 * is one statement: a part per stream (one company and one status, where the query names
 * several) and, after a cursor, per side of it, each part an index range in the segment's order
 * with its own LIMIT, merged by the outer ORDER BY. The indexes: the newest-first ones of
 * migration 0009, the New items by deadline (0011) and the other statuses by deadline (0022).
 *
 * A cursor inside a run of items with one deadline is two ranges, the rest of that deadline by id
 * and the later deadlines, rather than a row comparison: SQLite seeks a row value by its first
 * column alone and would read the whole run again on every page.
 *
 * Every statement names company_id and filters by it when the query names companies; across
 * companies they are the operators' own (test/helpers/statement-recorder.ts lists their shapes).
 * Statuses are spliced in as literals from the fixed list, so that the planners can use the
 * partial indexes; every value a client gives is a parameter.
 */
import { createHash } from "node:crypto";
import { UNFINISHED_STATUSES, FINISHED_STATUSES } from "../../domain/item-order.ts";
import type { WorkItemStatus } from "../../domain/views.ts";
import { statement, type Dialect, type Statement } from "../port.ts";
import type { OperatorItemFilters } from "../store.ts";
import { ITEM_COLUMNS } from "./sql-work-items.ts";

/** One part of an order: newest first; or, in the deadline order, the items of one group with a deadline (`dated`) or without. */
export type Segment = { kind: "newest" } | { kind: "dated" | "undated"; finished: boolean };

/** The segments in the order they are read; an item's segment comes from its position. */
export const DEADLINE_SEGMENTS: ReadonlyArray<Extract<Segment, { kind: "dated" | "undated" }>> = [
  { kind: "dated", finished: false },
  { kind: "undated", finished: false },
  { kind: "dated", finished: true },
  { kind: "undated", finished: true },
];

/** The filters a stream does not split on. */
type SharedFilters = Omit<OperatorItemFilters, "companyIds" | "status">;

/** The equalities one part holds: a company, a status, or neither. */
export interface Stream {
  companyId?: number;
  status?: WorkItemStatus;
}

export interface SegmentRead {
  filters: SharedFilters;
  segment: Segment;
  streams: Stream[];
  /** Where the page starts inside this segment: after this id, or this deadline and id. */
  after?: { deadlineAt: string | null; workItemId: number };
  limit: number;
}

const SHARED_COLUMNS = [
  ["kind", "kind"],
  ["customerReference", "customer_reference"],
  ["applicationNumber", "application_number"],
  ["registrationNumber", "registration_number"],
  ["workBatchId", "work_batch_id"],
] as const;
/** Filters that find a handful of rows through their own index: the planner reads those and sorts them. */
const SELECTIVE = ["customerReference", "applicationNumber", "registrationNumber", "workBatchId"] as const;

export const statusesOfGroup = (finished: boolean): readonly WorkItemStatus[] => (finished ? FINISHED_STATUSES : UNFINISHED_STATUSES);

/** Statements by their text: the same shape of query is the same statement, prepared once. */
const statements = new Map<string, Statement>();
/**
 * The statement of a text template whose `{{hint}}` marks where a dialect's fragment goes (none
 * but the one `fragment` gives): the template is the statement's identity.
 */
function interned(prefix: string, template: string, fragment: (d: Dialect) => string = () => ""): Statement {
  let found = statements.get(template);
  if (!found) {
    const text = template.includes(HINT) ? (d: Dialect) => template.replaceAll(HINT, fragment(d)) : template;
    found = statement(`${prefix}_${createHash("sha256").update(template).digest("hex").slice(0, 12)}`, text);
    statements.set(template, found);
  }
  return found;
}
const HINT = "{{hint}}";

/** The WHERE conditions of the shared filters, their values appended to `values` ($1 is the limit). */
function sharedConditions(filters: SharedFilters, values: unknown[]): string[] {
  const param = (value: unknown) => `$${values.push(value)}`;
  const conditions: string[] = [];
  for (const [field, column] of SHARED_COLUMNS) if (filters[field] !== undefined) conditions.push(`${column} = ${param(filters[field])}`);
  if (filters.deadlineBefore !== undefined) conditions.push(`deadline_at < ${param(filters.deadlineBefore)}`);
  if (filters.deadlineAtOrAfter !== undefined) conditions.push(`deadline_at >= ${param(filters.deadlineAtOrAfter)}`);
  return conditions;
}

/**
 * A customer reference is indexed per company only (company_id, customer_reference): across
 * companies, naming every company lets the planner look it up company by company (3 ms at 1M
 * items on SQLite) instead of reading every item (630 ms). Every item's company has its row.
 */
const EVERY_COMPANY = "company_id IN (SELECT company_id FROM companies)";
const referenceAcrossCompanies = (filters: SharedFilters) => filters.customerReference !== undefined;

/** A status as a literal; with `<> 'New'` beside another, which SQLite needs to use an index that leaves New items out. */
const statusCondition = (status: WorkItemStatus) => (status === "New" ? "status = 'New'" : `status = '${status}' AND status <> 'New'`);

const ORDER_BY: Record<Segment["kind"], string> = { newest: "work_item_id DESC", dated: "deadline_at, work_item_id", undated: "work_item_id" };

/** The statement that reads up to `limit` items of one segment, after a position in it. */
export function segmentStatement(read: SegmentRead): { statement: Statement; values: unknown[] } {
  const values: unknown[] = [read.limit];
  const param = (value: unknown) => `$${values.push(value)}`;
  const shared = sharedConditions(read.filters, values);
  const { segment, after } = read;
  // The cursor's sides: one range, or (inside a run of one deadline) the rest of the run and what follows it.
  const sides: string[][] = [];
  if (segment.kind === "newest") sides.push(after ? [`work_item_id < ${param(after.workItemId)}`] : []);
  else if (segment.kind === "undated") sides.push(["deadline_at IS NULL", ...(after ? [`work_item_id > ${param(after.workItemId)}`] : [])]);
  else if (after && after.deadlineAt !== null) {
    const deadline = param(after.deadlineAt);
    sides.push([`deadline_at = ${deadline}`, `work_item_id > ${param(after.workItemId)}`], [`deadline_at > ${deadline}`]);
  } else sides.push(["deadline_at IS NOT NULL"]);
  const selective = SELECTIVE.some((field) => read.filters[field] !== undefined);
  const order = ORDER_BY[segment.kind];
  const parts: string[] = [];
  for (const stream of read.streams) {
    const own = [
      ...(stream.companyId === undefined ? (referenceAcrossCompanies(read.filters) ? [EVERY_COMPANY] : []) : [`company_id = ${param(stream.companyId)}`]),
      ...(stream.status === undefined ? [] : [statusCondition(stream.status)]),
    ];
    // SQLite has no index of one company's New items by deadline: the New items' own index, which
    // holds the company, bounds the read by the queue rather than by the company's history.
    const hinted = segment.kind !== "newest" && stream.status === "New" && stream.companyId !== undefined && !selective;
    for (const side of sides) {
      const where = [...own, ...side, ...shared];
      parts.push(`SELECT ${ITEM_COLUMNS} FROM work_items${hinted ? HINT : ""}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${order} LIMIT $1`);
    }
  }
  const template =
    parts.length === 1
      ? parts[0]!
      : `SELECT ${ITEM_COLUMNS} FROM (${parts.map((part, index) => `${part}) part_${index}`).join(`\n UNION ALL SELECT ${ITEM_COLUMNS} FROM (`)}\n ORDER BY ${order} LIMIT $1`;
  return { statement: interned("list_all_items", template, (d) => d.indexedBy("work_items_new_by_deadline")), values };
}

/** Conditions on the companies and the status of a count: equalities, or a list of companies. */
function scopeConditions(filters: OperatorItemFilters, values: unknown[]): string[] {
  const param = (value: unknown) => `$${values.push(value)}`;
  const conditions: string[] = [];
  const companies = filters.companyIds ?? [];
  if (companies.length === 1) conditions.push(`company_id = ${param(companies[0])}`);
  else if (companies.length > 1) conditions.push(`company_id IN (${companies.map(param).join(", ")})`);
  else if (referenceAcrossCompanies(filters)) conditions.push(EVERY_COMPANY);
  if (filters.status !== undefined) conditions.push(statusCondition(filters.status));
  return conditions;
}

/** How many items match, reading at most $1 of them. */
export function cappedCountStatement(filters: OperatorItemFilters, cap: number): { statement: Statement; values: unknown[] } {
  const values: unknown[] = [cap];
  const where = [...scopeConditions(filters, values), ...sharedConditions(filters, values)];
  const template = `SELECT COUNT(*) AS items FROM (SELECT company_id FROM work_items${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} LIMIT $1) capped`;
  return { statement: interned("count_all_items", template), values };
}

/**
 * How many items match in each window of ids, added up: read by the key alone (on SQLite, NOT
 * INDEXED: through an index of a filter it would read all of that filter's rows, not the window's).
 */
export function sampleCountStatement(filters: OperatorItemFilters, windows: Array<[from: number, to: number]>): { statement: Statement; values: unknown[] } {
  const values: unknown[] = [];
  const where = [...scopeConditions(filters, values), ...sharedConditions(filters, values)];
  const ranges = windows.map(([from, to]) => `work_item_id BETWEEN $${values.push(from)} AND $${values.push(to)}`);
  const counts = ranges.map((range) => `SELECT COUNT(company_id) AS items FROM work_items${HINT} WHERE ${[range, ...where].join(" AND ")}`);
  const template = `SELECT COALESCE(SUM(items), 0) AS items FROM (${counts.join("\n UNION ALL ")}) sampled`;
  return { statement: interned("sample_all_items", template, (d) => d.notIndexed), values };
}

/** The statuses whose per-company counters the transitions keep (core/transition.ts): every one but New and InProgress. */
export const COUNTED_STATUSES: readonly WorkItemStatus[] = ["Submitted", "Successful", "Failed", "Cancelled", "Withdrawn"];

export const OPERATOR_ITEMS_SQL = {
  /** Across companies: each company's counter of items of one status (migration 0009, kept by the transitions), added up by the caller. */
  countedStatus: statement("counted_status", "SELECT company_id, item_count FROM company_item_counts WHERE status = $1 AND item_count <> 0"),
  /** The same for one company. */
  countedStatusOfCompany: statement("counted_status_of_company", "SELECT company_id, item_count FROM company_item_counts WHERE company_id = $1 AND status = $2"),
  /** The ids every item lies between, for the sample of an estimate: two numbers, from the ends of an index. */
  itemIdRange: statement("item_id_range", "SELECT (SELECT MIN(work_item_id) FROM work_items) AS lowest, (SELECT MAX(work_item_id) FROM work_items) AS highest"),
  /** Across companies: the registry a company name is matched against. */
  companyNames: statement("company_names", "SELECT company_id, name FROM companies ORDER BY company_id"),
} as const;

/** How many ids one statement asks the name of; fewer are padded with the first. */
export const NAMES_AT_ONCE = 50;
export const namesOfCompanies = statement(
  "names_of_companies",
  `SELECT company_id, name FROM companies WHERE company_id IN (${Array.from({ length: NAMES_AT_ONCE }, (_, index) => `$${index + 1}`).join(", ")})`,
);
