/**
 * GET /console/webhook-deliveries: deliveries across companies (or of one), each with its last
 * error and its attempts; a pending one whose last attempt failed is "Retrying". POST …/:id/redeliver
 * and …/:id/stop ("Stop retrying", SPEC §16), each with a reason, and a confirmation after.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { mayAct } from "../operators/roles.ts";
import { companiesMatching } from "../operators/work-item-list.ts";
import type { CompanyName, WebhookAttempt, WebhookDeliveryRecord, WebhookDeliveryStatus } from "../store/store.ts";
import { companyLabel, companyNames, type CompanyNames } from "./company-names.ts";
import { html, queryString, type Html } from "./html.ts";
import { confirmationNotice, csrfField, nextPageLink, page, reasonField, statusBadge, time, type Viewer } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { formField, operatorAction, viewerOf } from "./security.ts";

const PAGE_SIZE = 50;
const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ["pending", "delivered", "failed"];
/** The query parameters the page reads: its filters, page link and the confirmation of an action. */
export const DELIVERIES_QUERY = ["status", "company", "companyId", "cursor", "done", "delivery"] as const;

const answered = (attempt: WebhookAttempt) => attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode <= 299;

/** Pending, and its last attempt got no 2xx: the receiver is in trouble, not merely waiting its turn. */
export const isRetrying = (delivery: WebhookDeliveryRecord) => delivery.status === "pending" && delivery.attempts.length > 0 && !answered(delivery.attempts.at(-1)!);

/** The last attempt's failure, if it failed, then every attempt behind a disclosure: the list stays one line per delivery at 1280 px. */
function lastError(attempts: WebhookAttempt[], timeZone: string): Html {
  const last = attempts.at(-1);
  if (!last) return html`none yet`;
  const answer = (attempt: WebhookAttempt) => html`${attempt.statusCode === null ? "no answer" : `HTTP ${attempt.statusCode}`}${attempt.error ? html`: ${attempt.error}` : ""}`;
  const items = attempts.map((attempt) => html`<li>${time(attempt.at, timeZone)}: ${answer(attempt)}, ${attempt.durationMs} ms</li>`);
  return html`<div>${answered(last) ? "" : html`<span class="last-error">${answer(last)}</span>`}
<details><summary>${attempts.length === 1 ? "1 attempt" : `${attempts.length} attempts`}</summary><ol class="attempts">${items}</ol></details></div>`;
}

/** One reason for either action: Redeliver, or (while it is pending) Stop retrying. */
function actions(delivery: WebhookDeliveryRecord, viewer: Viewer, back: string): Html {
  if (!mayAct(viewer.operator.role)) return html``;
  const base = `/console/webhook-deliveries/${delivery.deliveryId}`;
  return html`<form method="post" action="${base}/redeliver" class="stacked compact">${csrfField(viewer.csrfToken)}<input type="hidden" name="back" value="${back}">
${reasonField(`delivery-reason-${delivery.deliveryId}`)}<span class="buttons"><button type="submit">Redeliver</button>${delivery.status === "pending"
    ? html` <button type="submit" formaction="${base}/stop" class="secondary">Stop retrying</button>`
    : ""}</span></form>`;
}

/** Status and event first, so a phone shows them first (SPEC §16); on a phone each row is a card. */
function deliveryRow(delivery: WebhookDeliveryRecord & { companyId: number }, viewer: Viewer, names: CompanyNames, back: string): Html {
  const status = isRetrying(delivery) ? html`<span class="badge badge-retrying">Retrying</span>` : statusBadge(delivery.status);
  return html`<tr>
<td data-label="Status">${status}</td><td data-label="Event">${delivery.type}</td>
<td class="num" data-label="Delivery">${delivery.deliveryId}</td>
<td class="company" data-label="Item, company"><span><a href="/console/work-items/${delivery.workItemId}">${delivery.workItemId}</a>, ${companyLabel(delivery.companyId, names)}</span></td>
<td class="wrap url" data-label="URL">${delivery.url}</td><td class="wrap" data-label="Last error">${lastError(delivery.attempts, viewer.timeZone)}</td>
<td data-label="Next attempt">${time(delivery.nextAttemptAt, viewer.timeZone, "short")}</td><td data-label="Action">${actions(delivery, viewer, back)}</td>
</tr>`;
}

/** A company name that starts no company's name, or several: the companies to choose from. */
function companyChoice(text: string, matched: CompanyName[], status: WebhookDeliveryStatus | undefined): Html {
  if (matched.length === 0) return html`<p class="muted">No company's name starts with “${text.trim()}”.</p>`;
  const links = matched.map(
    (company, index) => html`${index > 0 ? ", " : ""}<a href="/console/webhook-deliveries${queryString({ status, companyId: company.companyId })}">${company.name} <span class="muted">#${company.companyId}</span></a>`,
  );
  return html`<p>“${text.trim()}” starts the names of ${matched.length} companies; choose one: ${links}.</p>`;
}

const CONFIRMATIONS: Record<string, (deliveryId: string) => string> = {
  redelivered: (id) => `Delivery ${id} will be sent again within about a second.`,
  stopped: (id) => `Delivery ${id} is stopped: no further attempt will be made.`,
};

/** Back to the list the operator acted from, with what was done; only console paths are followed. */
function afterAction(back: string | undefined, outcome: keyof typeof CONFIRMATIONS, deliveryId: number): string {
  const list = back?.startsWith("/console/webhook-deliveries") && !back.startsWith("//") ? back : "/console/webhook-deliveries";
  const url = new URL(list, "http://console.invalid");
  url.searchParams.set("done", outcome);
  url.searchParams.set("delivery", String(deliveryId));
  return `${url.pathname}${url.search}`;
}

export function registerDeliveriesPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/webhook-deliveries", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const form = queryFields(request.query, DELIVERIES_QUERY);
    const status = form.status ? DELIVERY_STATUSES.find((known) => known === form.status) : undefined;
    if (form.status && !status) throw new ApiError("VALIDATION_FAILED", `Status must be one of ${DELIVERY_STATUSES.join(", ")}.`);
    let companyId = form.companyId ? positiveInteger(form.companyId) : undefined;
    if (form.companyId && companyId === undefined) throw new ApiError("VALIDATION_FAILED", "Company must be a company number such as 7, or the start of a company's name.");
    // A name stands for one company here: when it starts several names, the page asks which.
    const named = companyId === undefined && form.company ? await companiesMatching(ctx.store, form.company) : {};
    if (named.ids?.length === 1) companyId = named.ids[0];
    const choice = named.ids !== undefined && named.ids.length !== 1 ? companyChoice(form.company!, named.matched ?? [], status) : undefined;
    const beforeDeliveryId = form.cursor ? positiveInteger(form.cursor) : undefined;
    if (form.cursor && beforeDeliveryId === undefined) throw new ApiError("VALIDATION_FAILED", "That page link is not valid; start from the first page.");
    const deliveries = choice ? [] : await ctx.store.listAllWebhookDeliveries({
      limit: PAGE_SIZE,
      ...(status ? { status } : {}),
      ...(companyId ? { companyId } : {}),
      ...(beforeDeliveryId ? { beforeDeliveryId } : {}),
    });
    const names = await companyNames(ctx.store, deliveries.map((delivery) => delivery.companyId));
    const last = deliveries.at(-1);
    const next = deliveries.length === PAGE_SIZE && last ? `/console/webhook-deliveries${queryString({ status, companyId, cursor: last.deliveryId })}` : undefined;
    const back = `/console/webhook-deliveries${queryString({ status, companyId, cursor: beforeDeliveryId })}`;
    const confirmed = form.done && CONFIRMATIONS[form.done] && positiveInteger(form.delivery) ? CONFIRMATIONS[form.done]!(form.delivery!) : undefined;
    const options = DELIVERY_STATUSES.map((known) => html`<option value="${known}"${known === status ? html` selected` : ""}>${known}</option>`);
    const body = html`${confirmationNotice(confirmed)}<form method="get" action="/console/webhook-deliveries" class="filters" role="search" aria-label="Filter deliveries">
<div><label for="delivery-status">Status</label><select id="delivery-status" name="status"><option value="">Any</option>${options}</select></div>
<div><label for="delivery-company">Company</label><input id="delivery-company" name="company" type="search" maxlength="200" size="16" placeholder="name or number" aria-describedby="delivery-company-hint" value="${form.company ?? form.companyId ?? ""}"><span id="delivery-company-hint" class="visually-hidden">The start of a company's name, or its number</span></div>
<div class="filter-actions"><button type="submit">Filter</button></div>
</form>
${choice ?? ""}${deliveries.length === 0
  ? choice ? "" : html`<p>No webhook deliveries.</p>`
  : html`<div class="table-scroll" role="region" aria-label="Webhook deliveries" tabindex="0"><table class="cards">
<thead><tr><th scope="col">Status</th><th scope="col">Event</th><th scope="col" class="num">Delivery</th><th scope="col">Item, company</th><th scope="col">URL</th>
<th scope="col">Last error</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
<tbody>${deliveries.map((delivery) => deliveryRow(delivery, viewer, names, back))}</tbody></table></div>`}
${nextPageLink(next, "Older deliveries")}`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "webhook-deliveries", "Webhook deliveries", body).markup);
  });

  app.post<{ Params: { id: string } }>("/webhook-deliveries/:id/redeliver", async (request, reply) => {
    const action = operatorAction(request);
    const deliveryId = positiveInteger(request.params.id);
    if (deliveryId === undefined || !(await ctx.store.operatorRedeliverWebhook(deliveryId, action))) {
      throw new ApiError("NOT_FOUND", "There is no webhook delivery with that number.");
    }
    return reply.redirect(afterAction(formField(request, "back"), "redelivered", deliveryId), 303);
  });

  app.post<{ Params: { id: string } }>("/webhook-deliveries/:id/stop", async (request, reply) => {
    const action = operatorAction(request);
    const deliveryId = positiveInteger(request.params.id);
    const outcome = deliveryId === undefined ? "notFound" : await ctx.store.operatorStopWebhookDelivery(deliveryId, action);
    if (outcome === "notFound") throw new ApiError("NOT_FOUND", "There is no webhook delivery with that number.");
    if (outcome === "notPending") throw new ApiError("STATE_CONFLICT", "This delivery is no longer pending: there is nothing to stop.");
    return reply.redirect(afterAction(formField(request, "back"), "stopped", deliveryId!), 303);
  });
}
