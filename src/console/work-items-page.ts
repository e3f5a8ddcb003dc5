/**
 * GET /console/work-items: items across companies with the filters of SPEC §12.2 and §25 (a
 * company by number or name, a batch, a kind, "Overdue" and "Due today"), their total (SPEC §16)
 * and a keyset cursor; newest first, or by deadline, which is the order of New and due items
 * unless the operator picks another. The list is operators/work-item-list.ts, the operator API's.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { DUE_FILTERS, dueDay, type DueFilter } from "../domain/due.ts";
import type { ItemOrder } from "../domain/item-order.ts";
import type { WorkItemKind, WorkItemStatus } from "../domain/views.ts";
import { WORK_ITEM_KINDS } from "../domain/work-item-kinds.ts";
import { ApiError } from "../errors.ts";
import { listWorkItems, type ListedWorkItem, type WorkItemListPage, type WorkItemListRequest } from "../operators/work-item-list.ts";
import { isIsoDateTime } from "../http/validation.ts";
import { html, queryString, type Html } from "./html.ts";
import { companyLabel } from "./company-names.ts";
import { deadlineBadge } from "./deadline-mark.ts";
import { count, formatIn, nextPageLink, page, statusBadge, time, type Viewer } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { viewerOf } from "./security.ts";

const PAGE_SIZE = 50;
export const ITEM_STATUSES: readonly WorkItemStatus[] = ["New", "InProgress", "Submitted", "Successful", "Failed", "Cancelled", "Withdrawn"];
const TEXT_FILTERS = ["customerReference", "applicationNumber", "registrationNumber"] as const;
/** The text filters' labels, which the form shows and a refusal names. */
const TEXT_FILTER_LABELS: Record<(typeof TEXT_FILTERS)[number], string> = { customerReference: "Customer reference", applicationNumber: "Application number", registrationNumber: "Registration number" };
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The query parameters the page reads: its filters, sort and page link (`companyId` from the links of other pages). */
export const WORK_ITEMS_QUERY = ["company", "companyId", "workBatchId", "status", "kind", "due", "deadlineBefore", "sort", "cursor", ...TEXT_FILTERS] as const;
/** The filters as the form sends them: every value a string, empty meaning "any". */
type FilterForm = Partial<Record<(typeof WORK_ITEMS_QUERY)[number], string>>;

const SORTS: Record<ItemOrder, string> = { deadline: "Deadline: unfinished first, earliest first", newest: "Newest first" };
const DAY_FIELDS: Intl.DateTimeFormatOptions = { weekday: "short", day: "numeric", month: "short" };

/** Waiting items are read by urgency; every other list by age. */
const sortOf = (form: FilterForm): ItemOrder => (form.sort === "deadline" || form.sort === "newest" ? form.sort : form.status === "New" || form.due ? "deadline" : "newest");

/** "Due today", or on a weekend or holiday the working day it looks at (domain/due.ts). */
function dueLabels(viewer: Viewer, now: Date): Record<DueFilter, string> {
  const day = dueDay(now, viewer.calendar);
  return { overdue: "Overdue", today: day.today ? "Due today, not overdue" : `Due ${formatIn(viewer.timeZone, DAY_FIELDS).format(day.start)}, the next working day` };
}

const refuse = (message: string) => new ApiError("VALIDATION_FAILED", message);

/** The list's request from the form, each value checked, refused with the field's label. */
function requestOf(form: FilterForm): WorkItemListRequest {
  const request: WorkItemListRequest = { order: sortOf(form), limit: PAGE_SIZE };
  if (form.company?.trim()) request.company = form.company;
  if (form.companyId) {
    request.companyId = positiveInteger(form.companyId);
    if (request.companyId === undefined) throw refuse("Company must be a company number such as 7, or the start of a company's name.");
  }
  if (form.workBatchId) {
    request.workBatchId = positiveInteger(form.workBatchId);
    if (request.workBatchId === undefined) throw refuse("Batch must be a batch number such as 12.");
  }
  if (form.status) {
    if (!(ITEM_STATUSES as readonly string[]).includes(form.status)) throw refuse(`Status must be one of ${ITEM_STATUSES.join(", ")}.`);
    request.status = form.status as WorkItemStatus;
  }
  if (form.kind) {
    if (!(WORK_ITEM_KINDS as readonly string[]).includes(form.kind)) throw refuse(`Kind must be one of ${WORK_ITEM_KINDS.join(", ")}.`);
    request.kind = form.kind as WorkItemKind;
  }
  for (const name of TEXT_FILTERS) {
    const value = form[name]?.trim();
    if (value) {
      if (value.length > 200) throw refuse(`${TEXT_FILTER_LABELS[name]} may be at most 200 characters.`);
      request[name] = value;
    }
  }
  if (form.deadlineBefore) {
    if (!DATE.test(form.deadlineBefore) || !isIsoDateTime(`${form.deadlineBefore}T00:00:00Z`)) throw refuse("Deadline before must be a date, e.g. 2026-12-01.");
    request.deadlineBefore = new Date(`${form.deadlineBefore}T00:00:00Z`).toISOString();
  }
  if (form.due) {
    if (!(DUE_FILTERS as readonly string[]).includes(form.due)) throw refuse("Due must be overdue, today, or empty for any.");
    request.due = form.due as DueFilter;
  }
  if (form.sort && !(form.sort in SORTS)) throw refuse("Sort must be deadline or newest.");
  if (form.cursor) request.cursor = form.cursor;
  return request;
}

const options = (labels: Record<string, string>, chosen: string | undefined): Html[] =>
  Object.entries(labels).map(([value, label]) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`);

/** Filters folded into a disclosure, so that on a phone the first item is in view (console.js opens it on a wide screen). */
function filterForm(form: FilterForm, dueLabel: Record<DueFilter, string>): Html {
  const set = Object.entries(form).filter(([name, value]) => name !== "cursor" && name !== "sort" && value).length;
  return html`<details class="filter-fold" data-open-when-wide><summary>Filters${set > 0 ? ` (${set} set)` : ""}</summary>
${filterFields(form, dueLabel)}
</details>`;
}

function filterFields(form: FilterForm, dueLabel: Record<DueFilter, string>): Html {
  const text = (name: (typeof TEXT_FILTERS)[number]) =>
    html`<div><label for="filter-${name}">${TEXT_FILTER_LABELS[name]}</label><input id="filter-${name}" name="${name}" type="search" maxlength="200" value="${form[name] ?? ""}"></div>`;
  const statuses = ITEM_STATUSES.map((status) => html`<option value="${status}"${form.status === status ? html` selected` : ""}>${status}</option>`);
  const kinds = Object.fromEntries(WORK_ITEM_KINDS.map((kind) => [kind, kind]));
  return html`<form method="get" action="/console/work-items" class="filters" role="search" aria-label="Filter work items">
<div><label for="filter-status">Status</label><select id="filter-status" name="status"><option value="">Any</option>${statuses}</select></div>
<div><label for="filter-due">Due</label><select id="filter-due" name="due"><option value="">Any</option>${options(dueLabel, form.due)}</select></div>
<div><label for="filter-company">Company</label><input id="filter-company" name="company" type="search" maxlength="200" size="16" placeholder="name or number" aria-describedby="filter-company-hint" value="${form.company ?? form.companyId ?? ""}"><span id="filter-company-hint" class="visually-hidden">The start of a company's name, or its number</span></div>
<div><label for="filter-workBatchId">Batch</label><input id="filter-workBatchId" name="workBatchId" type="text" inputmode="numeric" pattern="[0-9]*" size="8" value="${form.workBatchId ?? ""}"></div>
<div><label for="filter-kind">Kind</label><select id="filter-kind" name="kind"><option value="">Any</option>${options(kinds, form.kind)}</select></div>
${text("customerReference")}
${text("applicationNumber")}
${text("registrationNumber")}
<div><label for="filter-deadlineBefore">Deadline before</label><input id="filter-deadlineBefore" name="deadlineBefore" type="date" value="${form.deadlineBefore ?? ""}"></div>
<div><label for="filter-sort">Sort</label><select id="filter-sort" name="sort">${options(SORTS, sortOf(form))}</select></div>
<div class="filter-actions"><button type="submit">Filter</button> <a href="/console/work-items">Clear</a></div>
</form>`;
}

/** The customer reference, status and deadline first, so a phone shows them first (SPEC §16); on a phone each row is a card. */
function itemsTable(items: ListedWorkItem[], viewer: Viewer): Html {
  if (items.length === 0) return html``;
  const names = new Map(items.flatMap((item) => (item.companyName === null ? [] : [[item.companyId, item.companyName] as const])));
  const rows = items.map(
    (item) => html`<tr>
<td class="reference"><a href="/console/work-items/${item.workItemId}">${item.customerReference}</a></td>
<td class="status" data-label="Status"><span>${statusBadge(item.status)}${deadlineBadge(item.deadline)}</span></td><td class="when" data-label="Deadline">${time(item.deadlineAt, viewer.timeZone, "short")}</td>
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

function totalText({ total, totalEstimate }: WorkItemListPage): string {
  if (total === null) return `About ${count(totalEstimate ?? 0)} items`;
  if (total === 0) return "No work items match.";
  return total === 1 ? "1 item" : `${count(total)} items`;
}

/** Which companies a name stood for, so that a name that matched none or several says so. */
function companiesNote(list: WorkItemListPage, form: FilterForm): Html {
  if (!list.companies) return html``;
  if (list.companies.length === 0) return html`<p class="muted">No company's name starts with “${form.company?.trim()}”.</p>`;
  const names = new Map(list.companies.map((company) => [company.companyId, company.name]));
  return html`<p class="muted">Company: ${list.companies.map((company, index) => html`${index > 0 ? ", " : ""}${companyLabel(company.companyId, names)}`)}.</p>`;
}

export function registerWorkItemsPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/work-items", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const form: FilterForm = queryFields(request.query, WORK_ITEMS_QUERY);
    const now = new Date();
    const listRequest = requestOf(form);
    const list = await listWorkItems(ctx.store, viewer.calendar, listRequest, now);
    const { cursor: _cursor, ...filters } = form;
    const next = list.nextCursor ? `/console/work-items${queryString({ ...filters, sort: listRequest.order, cursor: list.nextCursor })}` : undefined;
    const body = html`${filterForm(form, dueLabels(viewer, now))}
<p class="total" id="items-total">${totalText(list)}</p>
${companiesNote(list, form)}
${itemsTable(list.items, viewer)}\n${nextPageLink(next, listRequest.order === "deadline" ? "Later deadlines" : "Older items")}`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "work-items", "Work items", body).markup);
  });
}
