/**
 * GET /console/work-items/:id: the item, why it failed, its details, the actions the role
 * allows (SPEC §12.3), and its timeline oldest first. POST …/retry and …/cancel, each with a
 * reason, and a confirmation after. Retry is offered only where it can end otherwise.
 */
import { registrationOf, type WorkItemView } from "../domain/views.ts";
import { retryCanSucceed } from "../domain/item-errors.ts";
import { FOLLOW_UP_RULES } from "../domain/work-item-kinds.ts";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { mayAct } from "../operators/roles.ts";
import type { OperatorItemOutcome, OperatorWorkItemView, TimelineEntry } from "../store/store.ts";
import { companyLabel, companyNames, type CompanyNames } from "./company-names.ts";
import { deadlineBadge } from "./deadline-mark.ts";
import { deadlineMark } from "../domain/due.ts";
import { html, queryString, type Html } from "./html.ts";
import { confirmationNotice, csrfField, page, reasonField, statusBadge, time, type Viewer } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { operatorAction, viewerOf } from "./security.ts";

type ItemParams = { Params: { id: string } };
/** The query parameter the page reads: the confirmation of an action. */
export const WORK_ITEM_QUERY = ["done"] as const;

const itemId = (raw: string): number => {
  const id = positiveInteger(raw);
  if (id === undefined) throw new ApiError("NOT_FOUND", "There is no work item with that number.");
  return id;
};

/** The transport's date as the integrator sent it (exportDate), when the request has one. */
function transportDate(item: OperatorWorkItemView): string | null {
  const exportDate = item.request.exportDate;
  return typeof exportDate === "string" && !Number.isNaN(Date.parse(exportDate)) ? new Date(exportDate).toISOString() : null;
}

function facts(item: OperatorWorkItemView, viewer: Viewer, now: Date, names: CompanyNames): Html {
  const at = (iso: string | null) => time(iso, viewer.timeZone);
  const batch = html`<a href="/console/work-items${queryString({ companyId: item.companyId, workBatchId: item.workBatchId })}">${item.workBatchId}</a>`;
  const row = (label: string, value: Html | string | number | null) => html`<dt>${label}</dt><dd>${value ?? html`<span aria-label="none">—</span>`}</dd>`;
  return html`<dl class="facts facts-wide">
${row("Status", statusBadge(item.status))}
${row("Kind", item.kind)}
${row("Customer reference", item.customerReference)}
${row("Document reference", item.documentReference)}
${row("Company", companyLabel(item.companyId, names))}
${row("Work type", item.workType)}
${row("Batch", batch)}
${row("Transient failures", item.attempts)}
${row("Application number", item.authority.applicationNumber)}
${row("Registration number", registrationOf(item)?.registrationNumber ?? item.authority.registrationNumber)}
${row("Transport date", at(transportDate(item)))}
${row("Deadline", html`${at(item.deadlineAt)}${deadlineBadge(deadlineMark(item, now, viewer.calendar))}`)}
${row("Created", at(item.createdAt))}
${row("Updated", at(item.updatedAt))}
${row("Completed", at(item.completedAt))}
${row("Webhook URL", item.webhookUrl)}
</dl>`;
}

/** An original and its changes and withdrawal, linked both ways (SPEC §15). */
function documentLinks(item: OperatorWorkItemView, followUps: WorkItemView[], viewer: Viewer): Html {
  if (item.kind !== "create") {
    const { ofOriginal } = FOLLOW_UP_RULES[item.kind];
    return html`<section aria-labelledby="document-heading"><h2 id="document-heading">Document</h2>
<p>${ofOriginal} of <a href="/console/work-items/${item.originalWorkItemId}">work item ${item.originalWorkItemId}</a>.</p></section>`;
  }
  if (followUps.length === 0 && !item.revision) return html``;
  const rows = followUps.map(
    (followUp) => html`<tr><td><a href="/console/work-items/${followUp.workItemId}">${followUp.workItemId}</a></td><td>${followUp.kind}</td>
<td>${statusBadge(followUp.status)}</td><td>${time(followUp.createdAt, viewer.timeZone)}</td></tr>`,
  );
  return html`<section aria-labelledby="document-heading"><h2 id="document-heading">Document</h2>
<p>Revision ${item.revision ?? 0}: the request below shows the document with its changes applied.</p>
${followUps.length > 0
    ? html`<div class="table-scroll" role="region" aria-label="Changes and withdrawal" tabindex="0">
<table><thead><tr><th scope="col">Item</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Received</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : ""}
</section>`;
}

function whyItFailed(item: OperatorWorkItemView): Html {
  if (!item.error) return html``;
  const details = item.error.details.map((detail) => html`<li><code>${detail.field}</code>: ${detail.message}</li>`);
  return html`<section class="failure" aria-labelledby="failure-heading">
<h2 id="failure-heading">Why it failed</h2>
<p><code>${item.error.code}</code>: ${item.error.message}</p>
${details.length > 0 ? html`<ul>${details}</ul>` : ""}
</section>`;
}

function timelineTable(timeline: TimelineEntry[], viewer: Viewer): Html {
  const rows = timeline.map(
    (entry) => html`<tr><td data-label="When">${time(entry.at, viewer.timeZone)}</td><td data-label="What">${entry.kind}</td><td data-label="Status">${entry.status ? statusBadge(entry.status) : ""}</td>
<td class="wrap" data-label="Detail">${entry.detail ?? ""}</td><td data-label="Operator">${entry.operator?.email ?? ""}</td><td class="wrap" data-label="Reason">${entry.reason ?? ""}</td></tr>`,
  );
  return html`<section aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>
<div class="table-scroll" role="region" aria-label="Timeline entries" tabindex="0">
<table class="cards"><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Status</th><th scope="col">Detail</th><th scope="col">Operator</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows}</tbody></table>
</div></section>`;
}

function actions(item: OperatorWorkItemView, viewer: Viewer): Html {
  if (!mayAct(viewer.operator.role)) return html``;
  const form = (action: "retry" | "cancel", label: string, explanation: string, buttonClass = "") => html`<form method="post" action="/console/work-items/${item.workItemId}/${action}" class="stacked narrow">
<p>${explanation}</p>
${csrfField(viewer.csrfToken)}
${reasonField(`${action}-reason`)}
<button type="submit"${buttonClass ? html` class="${buttonClass}"` : ""}>${label}</button>
</form>`;
  let possible: Html;
  if (item.status === "Failed" && item.error && !retryCanSucceed(item.error.code)) {
    possible = html`<p>Retry is not offered: the same item would fail again (<code>${item.error.code}</code>). The integrator sends a corrected item, or a change of its original.</p>`;
  } else if (item.status === "Failed") {
    possible = form("retry", "Retry", "Put the item back to New in its company's open batch, with its attempts reset.");
  } else if (item.status === "New") {
    possible = form("cancel", "Cancel item", "Cancel the item while its batch is still open: it is never filed.", "secondary");
  } else {
    possible = html`<p>No action applies to an item that is ${item.status}.</p>`;
  }
  return html`<section aria-labelledby="actions-heading"><h2 id="actions-heading">Actions</h2>
${possible}
</section>`;
}

export function registerWorkItemPage(app: FastifyInstance, ctx: AppContext): void {
  app.get<ItemParams>("/work-items/:id", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const found = await ctx.store.getWorkItemTimeline(itemId(request.params.id));
    if (!found) throw new ApiError("NOT_FOUND", "There is no work item with that number.");
    const { item, timeline } = found;
    const [followUps, names] = await Promise.all([
      item.kind === "create" ? ctx.store.listWorkItems(item.companyId, { originalWorkItemId: item.workItemId, limit: 50 }) : [],
      companyNames(ctx.store, [item.companyId]),
    ]);
    const now = new Date();
    const done = queryFields(request.query, WORK_ITEM_QUERY).done;
    const body = html`${confirmationNotice(done === "retried" ? "Retried: the item is New again in its company's open batch." : done === "cancelled" ? "Cancelled: the item will not be filed." : undefined)}
<p class="muted">Work item ${item.workItemId} of company ${companyLabel(item.companyId, names)}: ${statusBadge(item.status)}${deadlineBadge(deadlineMark(item, now, viewer.calendar))}</p>
${whyItFailed(item)}
<section aria-labelledby="details-heading"><h2 id="details-heading">Details</h2>${facts(item, viewer, now, names)}</section>
${actions(item, viewer)}
${documentLinks(item, followUps, viewer)}
${timelineTable(timeline, viewer)}
<section aria-labelledby="request-heading"><h2 id="request-heading">Request as submitted</h2>
<pre class="request" tabindex="0">${JSON.stringify(item.request, null, 2)}</pre></section>`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "work-items", `Work item ${item.customerReference}`, body).markup);
  });

  const answer = (outcome: OperatorItemOutcome, id: number, verb: string): string => {
    if (outcome.kind === "notFound") throw new ApiError("NOT_FOUND", "There is no work item with that number.");
    if (outcome.kind === "conflict") throw new ApiError("STATE_CONFLICT", `This item is ${outcome.item.status}, so it cannot be ${verb}.`);
    return `/console/work-items/${id}?done=${verb}`;
  };

  app.post<ItemParams>("/work-items/:id/retry", async (request, reply) => {
    const action = operatorAction(request);
    const id = itemId(request.params.id);
    return reply.redirect(answer(await ctx.store.retryWorkItem(id, { batchMaxItems: ctx.config.batchMaxItems }, action), id, "retried"), 303);
  });

  app.post<ItemParams>("/work-items/:id/cancel", async (request, reply) => {
    const action = operatorAction(request);
    const id = itemId(request.params.id);
    return reply.redirect(answer(await ctx.store.operatorCancelWorkItem(id, action), id, "cancelled"), 303);
  });
}
