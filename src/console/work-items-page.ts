/**
 * GET /console/work-items: items across companies with the filters of SPEC §12.2 (and a batch,
 * "Overdue" and "Due today"), their total (SPEC §16) and a keyset cursor; newest first, or by
 * deadline, which is the order of New items unless the operator picks another.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import type { WorkItemStatus } from "../domain/views.ts";
import { ApiError } from "../errors.ts";
import type { OperatorWorkItemsQuery, OperatorWorkItemView } from "../store/store.ts";
import { html, queryString, type Html } from "./html.ts";
import { companyLabel, companyNames, type CompanyNames } from "./company-names.ts";
import { deadlineBadge, endOfDayIn } from "./deadline-mark.ts";
import { count, nextPageLink, page, statusBadge, time, type Viewer } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { isIsoDateTime } from "../http/validation.ts";
import { viewerOf } from "./security.ts";

const PAGE_SIZE = 50;
export const ITEM_STATUSES: readonly WorkItemStatus[] = ["New", "InProgress", "Submitted", "Successful", "Failed", "Cancelled", "Withdrawn"];
const TEXT_FILTERS = ["customerReference", "applicationNumber", "registrationNumber"] as const;
/** The text filters' labels, which the form shows and a refusal names. */
const TEXT_FILTER_LABELS: Record<(typeof TEXT_FILTERS)[number], string> = { customerReference: "Customer reference", applicationNumber: "Application number", registrationNumber: "Registration number" };
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Totals are counted up to here; above it the list says "more than". */
const TOTAL_CAP = 10_000;

/** The query parameters the page reads: its filters, sort and page link. */
export const WORK_ITEMS_QUERY = ["companyId", "workBatchId", "status", "due", "deadlineBefore", "sort", "cursor", ...TEXT_FILTERS] as const;
/** The filters as the form sends them: every value a string, empty meaning "any". */
type FilterForm = Partial<Record<(typeof WORK_ITEMS_QUERY)[number], string>>;

const DUE_FILTERS = { overdue: "Overdue", today: "Due today" } as const;
const SORTS = { deadline: "Deadline, earliest first", newest: "Newest first" } as const;

/** Waiting items are read by urgency; every other list by age. */
const sortOf = (form: FilterForm): keyof typeof SORTS => (form.sort === "deadline" || form.sort === "newest" ? form.sort : form.status === "New" || form.due ? "deadline" : "newest");

/** The deadline order's page link: the last item's deadline and id. */
const deadlineCursor = (item: OperatorWorkItemView) => `${item.deadlineAt}~${item.workItemId}`;

function parseCursor(form: FilterForm, query: OperatorWorkItemsQuery): void {
  if (!form.cursor) return;
  const invalid = () => new ApiError("VALIDATION_FAILED", "That page link is not valid; start from the first page.");
  if (query.order === "deadline") {
    const [deadlineAt = "", id = ""] = form.cursor.split("~");
    const workItemId = positiveInteger(id);
    if (!isIsoDateTime(deadlineAt) || workItemId === undefined) throw invalid();
    query.afterDeadline = { deadlineAt: new Date(deadlineAt).toISOString(), workItemId };
  } else {
    query.beforeWorkItemId = positiveInteger(form.cursor);
    if (query.beforeWorkItemId === undefined) throw invalid();
  }
}

function parseFilters(form: FilterForm, now: Date, timeZone: string): OperatorWorkItemsQuery {
  const query: OperatorWorkItemsQuery = { limit: PAGE_SIZE };
  if (form.companyId) {
    query.companyId = positiveInteger(form.companyId);
    if (query.companyId === undefined) throw new ApiError("VALIDATION_FAILED", "Company must be a company number such as 7.");
  }
  if (form.workBatchId) {
    query.workBatchId = positiveInteger(form.workBatchId);
    if (query.workBatchId === undefined) throw new ApiError("VALIDATION_FAILED", "Batch must be a batch number such as 12.");
  }
  if (form.status) {
    if (!(ITEM_STATUSES as readonly string[]).includes(form.status)) throw new ApiError("VALIDATION_FAILED", `Status must be one of ${ITEM_STATUSES.join(", ")}.`);
    query.status = form.status as WorkItemStatus;
  }
  for (const name of TEXT_FILTERS) {
    const value = form[name]?.trim();
    if (value) {
      if (value.length > 200) throw new ApiError("VALIDATION_FAILED", `${TEXT_FILTER_LABELS[name]} may be at most 200 characters.`);
      query[name] = value;
    }
  }
  if (form.deadlineBefore) {
    if (!DATE.test(form.deadlineBefore) || !isIsoDateTime(`${form.deadlineBefore}T00:00:00Z`)) throw new ApiError("VALIDATION_FAILED", "Deadline before must be a date, e.g. 2026-12-01.");
    query.deadlineBefore = new Date(`${form.deadlineBefore}T00:00:00Z`).toISOString();
  }
  if (form.due) {
    if (form.due !== "overdue" && form.due !== "today") throw new ApiError("VALIDATION_FAILED", "Due must be overdue, today, or empty for any.");
    if (query.status !== undefined && query.status !== "New") throw new ApiError("VALIDATION_FAILED", "Only New items can be overdue or due; choose the status New or Any.");
    query.status = "New";
    const until = (form.due === "overdue" ? now : endOfDayIn(now, timeZone)).toISOString();
    if (query.deadlineBefore === undefined || query.deadlineBefore > until) query.deadlineBefore = until;
  }
  if (form.sort && !(form.sort in SORTS)) throw new ApiError("VALIDATION_FAILED", "Sort must be deadline or newest.");
  query.order = sortOf(form);
  parseCursor(form, query);
  return query;
}

const options = (labels: Record<string, string>, chosen: string | undefined): Html[] =>
  Object.entries(labels).map(([value, label]) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`);

/** Filters folded into a disclosure, so that on a phone the first item is in view (console.js opens it on a wide screen). */
function filterForm(form: FilterForm): Html {
  const set = Object.entries(form).filter(([name, value]) => name !== "cursor" && name !== "sort" && value).length;
  return html`<details class="filter-fold" data-open-when-wide><summary>Filters${set > 0 ? ` (${set} set)` : ""}</summary>
${filterFields(form)}
</details>`;
}

function filterFields(form: FilterForm): Html {
  const text = (name: (typeof TEXT_FILTERS)[number]) =>
    html`<div><label for="filter-${name}">${TEXT_FILTER_LABELS[name]}</label><input id="filter-${name}" name="${name}" type="search" maxlength="200" value="${form[name] ?? ""}"></div>`;
  const statuses = ITEM_STATUSES.map((status) => html`<option value="${status}"${form.status === status ? html` selected` : ""}>${status}</option>`);
  return html`<form method="get" action="/console/work-items" class="filters" role="search" aria-label="Filter work items">
<div><label for="filter-status">Status</label><select id="filter-status" name="status"><option value="">Any</option>${statuses}</select></div>
<div><label for="filter-due">Due</label><select id="filter-due" name="due"><option value="">Any</option>${options(DUE_FILTERS, form.due)}</select></div>
<div><label for="filter-companyId">Company</label><input id="filter-companyId" name="companyId" type="text" inputmode="numeric" pattern="[0-9]*" size="8" value="${form.companyId ?? ""}"></div>
<div><label for="filter-workBatchId">Batch</label><input id="filter-workBatchId" name="workBatchId" type="text" inputmode="numeric" pattern="[0-9]*" size="8" value="${form.workBatchId ?? ""}"></div>
${text("customerReference")}
${text("applicationNumber")}
${text("registrationNumber")}
<div><label for="filter-deadlineBefore">Deadline before</label><input id="filter-deadlineBefore" name="deadlineBefore" type="date" value="${form.deadlineBefore ?? ""}"></div>
<div><label for="filter-sort">Sort</label><select id="filter-sort" name="sort">${options(SORTS, sortOf(form))}</select></div>
<div class="filter-actions"><button type="submit">Filter</button> <a href="/console/work-items">Clear</a></div>
</form>`;
}

/** The customer reference, status and deadline first, so a phone shows them first (SPEC §16); on a phone each row is a card. */
function itemsTable(items: OperatorWorkItemView[], viewer: Viewer, now: Date, names: CompanyNames): Html {
  if (items.length === 0) return html``;
  const rows = items.map(
    (item) => html`<tr>
<td class="reference"><a href="/console/work-items/${item.workItemId}">${item.customerReference}</a></td>
<td class="status" data-label="Status"><span>${statusBadge(item.status)}${deadlineBadge(item, now, viewer.timeZone)}</span></td><td class="when" data-label="Deadline">${time(item.deadlineAt, viewer.timeZone, "short")}</td>
<td class="num" data-label="Item">${item.workItemId}</td><td data-label="Company"><span>${companyLabel(item.companyId, names)}</span></td><td data-label="Work type">${item.workType}</td>
<td data-label="Error">${item.error ? item.error.code : ""}</td><td data-label="Created">${time(item.createdAt, viewer.timeZone, "short")}</td>
</tr>`,
  );
  return html`<div class="table-scroll" role="region" aria-label="Work items" tabindex="0">
<table class="cards">
<thead><tr><th scope="col">Customer reference</th><th scope="col">Status</th><th scope="col">Deadline</th><th scope="col" class="num">Item</th><th scope="col">Company</th><th scope="col">Work type</th>
<th scope="col">Error</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</div>`;
}

function totalText(total: number): string {
  if (total === 0) return "No work items match.";
  if (total > TOTAL_CAP) return `More than ${count(TOTAL_CAP)} items`;
  return total === 1 ? "1 item" : `${count(total)} items`;
}

export function registerWorkItemsPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/work-items", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const form: FilterForm = queryFields(request.query, WORK_ITEMS_QUERY);
    const now = new Date();
    const query = parseFilters(form, now, viewer.timeZone);
    const { limit: _limit, beforeWorkItemId: _before, afterDeadline: _after, ...filters } = query;
    const [items, total] = await Promise.all([ctx.store.listAllWorkItems(query), ctx.store.countAllWorkItems(filters, TOTAL_CAP + 1)]);
    const names = await companyNames(ctx.store, items.map((item) => item.companyId));
    const last = items.at(-1);
    const cursor = last && (query.order === "deadline" ? deadlineCursor(last) : last.workItemId);
    const next = items.length === PAGE_SIZE && cursor ? `/console/work-items${queryString({ ...form, sort: query.order, cursor })}` : undefined;
    const body = html`${filterForm(form)}
<p class="total" id="items-total">${totalText(total)}</p>
${itemsTable(items, viewer, now, names)}\n${nextPageLink(next, query.order === "deadline" ? "Later deadlines" : "Older items")}`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "work-items", "Work items", body).markup);
  });
}
