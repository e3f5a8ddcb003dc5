/**
 * The list of work items operators read (SPEC §12.2, §16, §25): one implementation behind the
 * operator API's `GET /api/Operator/WorkItems` and the console's Work items page, so that the two
 * list the same items in the same order for the same filters. It finds the companies a name
 * starts, turns `due` into deadlines (domain/due.ts), reads a page in either order
 * (domain/item-order.ts) after a cursor, counts the total, and gives each item its company's name
 * and how near its deadline is.
 *
 * Bad input is a 400 problem naming the parameter, as the API and the console both show it.
 */
import type { Config } from "../config.ts";
import { dueWindow, deadlineMarker, isOverdue, type DeadlineMark, type DueCalendar, type DueFilter } from "../domain/due.ts";
import { positionOf, type ItemOrder, type ItemPosition } from "../domain/item-order.ts";
import type { WorkItemKind, WorkItemStatus } from "../domain/views.ts";
import { validationError } from "../errors.ts";
import type { CompanyName, OperatorItemFilters, OperatorWorkItemView, Store } from "../store/store.ts";

/** Counted exactly up to here; above it the total is an estimate (the store's countAllWorkItems). */
export const TOTAL_CAP = 10_000;
/** The most companies one name may stand for: each is read as its own index range. */
export const MAX_NAMED_COMPANIES = 20;

export const dueCalendarOf = (config: Pick<Config, "consoleTimeZone" | "deadline">): DueCalendar => ({ timeZone: config.consoleTimeZone, holidays: config.deadline.holidays });

/** What a caller asks for, each value of the right type already (the route's schema, or the console's form). */
export interface WorkItemListRequest {
  /** A company's number (`42`, `#42`), or the start of company names, in any letter case. */
  company?: string;
  /** A company's number, as the API took it before `company`. */
  companyId?: number;
  status?: WorkItemStatus;
  kind?: WorkItemKind;
  due?: DueFilter;
  customerReference?: string;
  applicationNumber?: string;
  registrationNumber?: string;
  workBatchId?: number;
  /** An instant (ISO 8601). */
  deadlineBefore?: string;
  order: ItemOrder;
  cursor?: string;
  limit: number;
}

/** An item as the list shows it: its company's name, and how near its deadline is at the time of the answer. */
export type ListedWorkItem = OperatorWorkItemView & { companyName: string | null; overdue: boolean; deadline: DeadlineMark | null };

export interface WorkItemListPage {
  items: ListedWorkItem[];
  nextCursor: string | null;
  /** How many items match the filters, when counted exactly; null when estimated. */
  total: number | null;
  /** An estimate (above TOTAL_CAP) when counting exactly would read more rows than that; null when `total` is exact. */
  totalEstimate: number | null;
  /** The companies a `company` name matched (none: an empty list); undefined without one. */
  companies?: CompanyName[];
}

const refuse = (field: string, message: string) => validationError({ [field]: [message] });

// ---------------------------------------------------------------------------------------------
// Cursors: opaque to clients; `v1:` is the newest order's (as every keyset list's), `v2:` the deadline order's.

const NEWEST = "v1:";
const BY_DEADLINE = "v2:";

export function encodeItemCursor(position: ItemPosition): string {
  const text = position.order === "newest" ? `${NEWEST}${position.workItemId}` : `${BY_DEADLINE}${position.finished ? 1 : 0}:${position.workItemId}:${position.deadlineAt ?? ""}`;
  return Buffer.from(text).toString("base64url");
}

const idIn = (text: string | undefined) => (text !== undefined && /^[1-9][0-9]{0,15}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined);
/** A deadline as the store writes it (toISOString), so that the cursor finds its run of equal deadlines. */
const isStoredInstant = (text: string) => !Number.isNaN(Date.parse(text)) && new Date(Date.parse(text)).toISOString() === text;

/** The position a cursor holds; a 400 naming `cursor` when it is not a nextCursor of this order. */
export function decodeItemCursor(cursor: string, order: ItemOrder): ItemPosition {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  if (order === "newest" && text.startsWith(NEWEST)) {
    const workItemId = idIn(text.slice(NEWEST.length));
    if (workItemId !== undefined) return { order, workItemId };
  }
  const parts = order === "deadline" && text.startsWith(BY_DEADLINE) ? /^([01]):([0-9]+):(.*)$/.exec(text.slice(BY_DEADLINE.length)) : null;
  const workItemId = idIn(parts?.[2]);
  if (parts && workItemId !== undefined && (parts[3] === "" || isStoredInstant(parts[3]!))) {
    return { order: "deadline", finished: parts[1] === "1", deadlineAt: parts[3] === "" ? null : parts[3]!, workItemId };
  }
  throw refuse("cursor", `is not a nextCursor of a previous page in the ${order} order`);
}

// ---------------------------------------------------------------------------------------------
// Filters.

/** Case and composition do not matter: "acme" finds "ACME Transport", "é" finds "É". */
const folded = (text: string) => text.normalize("NFC").toLocaleLowerCase("en");

/** The companies a `company` value stands for: the one it numbers, or every one whose name starts with it. */
async function companiesOf(store: Store, request: WorkItemListRequest): Promise<{ ids?: number[]; matched?: CompanyName[] }> {
  if (request.company === undefined) return request.companyId === undefined ? {} : { ids: [request.companyId] };
  if (request.companyId !== undefined) throw refuse("company", "give a company by companyId or by company, not both");
  return companiesMatching(store, request.company);
}

/**
 * The companies a company filter's text stands for (SPEC §25), wherever a list takes one: `42` or
 * `#42` is that company; other text, every company whose name starts with it, in any letter case.
 */
export async function companiesMatching(store: Store, company: string): Promise<{ ids?: number[]; matched?: CompanyName[] }> {
  const text = company.trim();
  if (text === "") return {};
  const number = /^#?([0-9]+)$/.exec(text)?.[1];
  if (number !== undefined) {
    const companyId = Number(number);
    if (!Number.isSafeInteger(companyId) || companyId < 1) throw refuse("company", "is not a company number: a number from 1 on");
    return { ids: [companyId] };
  }
  const prefix = folded(text);
  const matched = (await store.listCompanyNames()).filter((company) => folded(company.name).startsWith(prefix));
  if (matched.length > MAX_NAMED_COMPANIES) {
    throw refuse("company", `starts the names of ${matched.length} companies; give more of the name, or the company's number (a name may stand for ${MAX_NAMED_COMPANIES} at most)`);
  }
  return { ids: matched.map((company) => company.companyId), matched };
}

/** The store's filters for a request, `due` turned into deadlines at `now`. */
function filtersOf(request: WorkItemListRequest, companyIds: number[] | undefined, now: Date, calendar: DueCalendar): OperatorItemFilters {
  const { customerReference, applicationNumber, registrationNumber, workBatchId, kind } = request;
  const filters: OperatorItemFilters = { companyIds, status: request.status, kind, customerReference, applicationNumber, registrationNumber, workBatchId, deadlineBefore: request.deadlineBefore };
  if (request.due !== undefined) {
    if (request.status !== undefined && request.status !== "New") throw refuse("due", "only New items are overdue or due; leave status out, or give New");
    const window = dueWindow(request.due, now, calendar);
    filters.status = "New";
    if (filters.deadlineBefore === undefined || Date.parse(filters.deadlineBefore) > Date.parse(window.deadlineBefore)) filters.deadlineBefore = window.deadlineBefore;
    filters.deadlineAtOrAfter = window.deadlineAtOrAfter;
  }
  // Named one by one above: an undefined filter is left out, so that the store sees only what was asked.
  for (const key of Object.keys(filters) as Array<keyof OperatorItemFilters>) if (filters[key] === undefined) delete filters[key];
  return filters;
}

// ---------------------------------------------------------------------------------------------

/** One page of the list, its cursor and its total, at `now`. */
export async function listWorkItems(store: Store, calendar: DueCalendar, request: WorkItemListRequest, now: Date = new Date()): Promise<WorkItemListPage> {
  const after = request.cursor === undefined ? undefined : decodeItemCursor(request.cursor, request.order);
  const { ids, matched } = await companiesOf(store, request);
  if (request.workBatchId !== undefined && ids === undefined) throw refuse("workBatchId", "needs companyId or company: a batch is found through its company's items");
  const filters = filtersOf(request, ids, now, calendar);
  const [rows, counted] = await Promise.all([
    store.listAllWorkItems({ ...filters, order: request.order, ...(after ? { after } : {}), limit: request.limit + 1 }),
    store.countAllWorkItems(filters, TOTAL_CAP),
  ]);
  const page = rows.slice(0, request.limit);
  const last = page.at(-1);
  const names = await store.companyNames(page.map((item) => item.companyId));
  const mark = deadlineMarker(now, calendar);
  return {
    items: page.map((item) => ({ ...item, companyName: names.get(item.companyId) ?? null, overdue: isOverdue(item, now), deadline: mark(item) })),
    nextCursor: rows.length > request.limit && last ? encodeItemCursor(positionOf(last, request.order)) : null,
    total: counted.exact ? counted.count : null,
    totalEstimate: counted.exact ? null : counted.count,
    ...(matched ? { companies: matched } : {}),
  };
}
