/**
 * GET /console/webhook-deliveries: deliveries across companies, each with its last error and its
 * attempts; POST …/:id/redeliver and …/:id/stop ("Stop retrying", SPEC §16), each with a reason.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { mayAct } from "../operators/roles.ts";
import type { WebhookAttempt, WebhookDeliveryRecord, WebhookDeliveryStatus } from "../store/store.ts";
import { html, queryString, type Html } from "./html.ts";
import { csrfField, nextPageLink, page, reasonField, statusBadge, time, type Viewer } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { operatorAction, viewerOf } from "./security.ts";

const PAGE_SIZE = 50;
const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ["pending", "delivered", "failed"];

/** The last attempt's answer and error, then every attempt behind a disclosure: the list stays one line per delivery at 1280 px. */
function lastError(attempts: WebhookAttempt[], timeZone: string): Html {
  const last = attempts.at(-1);
  if (!last) return html`none yet`;
  const answer = (attempt: WebhookAttempt) => html`${attempt.statusCode === null ? "no answer" : `HTTP ${attempt.statusCode}`}${attempt.error ? html`: ${attempt.error}` : ""}`;
  const items = attempts.map((attempt) => html`<li>${time(attempt.at, timeZone)}: ${answer(attempt)}, ${attempt.durationMs} ms</li>`);
  return html`<span class="last-error">${answer(last)}</span>
<details><summary>${attempts.length === 1 ? "1 attempt" : `${attempts.length} attempts`}</summary><ol class="attempts">${items}</ol></details>`;
}

/** One reason for either action: Redeliver, or (while it is pending) Stop retrying. */
function actions(delivery: WebhookDeliveryRecord, viewer: Viewer): Html {
  if (!mayAct(viewer.operator.role)) return html``;
  const base = `/console/webhook-deliveries/${delivery.deliveryId}`;
  return html`<form method="post" action="${base}/redeliver" class="stacked compact">${csrfField(viewer.csrfToken)}
${reasonField(`delivery-reason-${delivery.deliveryId}`)}<span class="buttons"><button type="submit">Redeliver</button>${delivery.status === "pending"
    ? html` <button type="submit" formaction="${base}/stop" class="secondary">Stop retrying</button>`
    : ""}</span></form>`;
}

/** Status and event first, so a phone shows them without scrolling sideways (SPEC §16). */
function deliveryRow(delivery: WebhookDeliveryRecord & { companyId: number }, viewer: Viewer): Html {
  return html`<tr>
<td>${statusBadge(delivery.status)}</td><td>${delivery.type}</td>
<td class="num">${delivery.deliveryId}</td>
<td><a href="/console/work-items/${delivery.workItemId}">${delivery.workItemId}</a> <span class="muted">#${delivery.companyId}</span></td>
<td class="wrap url">${delivery.url}</td><td class="wrap">${lastError(delivery.attempts, viewer.timeZone)}</td>
<td>${time(delivery.nextAttemptAt, viewer.timeZone, "short")}</td><td>${actions(delivery, viewer)}</td>
</tr>`;
}

export function registerDeliveriesPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/webhook-deliveries", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const form = queryFields(request.query);
    const status = form.status ? DELIVERY_STATUSES.find((known) => known === form.status) : undefined;
    if (form.status && !status) throw new ApiError("VALIDATION_FAILED", `Status must be one of ${DELIVERY_STATUSES.join(", ")}.`);
    const beforeDeliveryId = form.cursor ? positiveInteger(form.cursor) : undefined;
    if (form.cursor && beforeDeliveryId === undefined) throw new ApiError("VALIDATION_FAILED", "That page link is not valid; start from the first page.");
    const deliveries = await ctx.store.listAllWebhookDeliveries({
      limit: PAGE_SIZE,
      ...(status ? { status } : {}),
      ...(beforeDeliveryId ? { beforeDeliveryId } : {}),
    });
    const last = deliveries.at(-1);
    const next = deliveries.length === PAGE_SIZE && last ? `/console/webhook-deliveries${queryString({ status, cursor: last.deliveryId })}` : undefined;
    const options = DELIVERY_STATUSES.map((known) => html`<option value="${known}"${known === status ? html` selected` : ""}>${known}</option>`);
    const body = html`<form method="get" action="/console/webhook-deliveries" class="filters" role="search" aria-label="Filter deliveries">
<div><label for="delivery-status">Status</label><select id="delivery-status" name="status"><option value="">Any</option>${options}</select></div>
<div class="filter-actions"><button type="submit">Filter</button></div>
</form>
${deliveries.length === 0
  ? html`<p>No webhook deliveries.</p>`
  : html`<div class="table-scroll" role="region" aria-label="Webhook deliveries" tabindex="0"><table>
<thead><tr><th scope="col">Status</th><th scope="col">Event</th><th scope="col" class="num">Delivery</th><th scope="col">Item, company</th><th scope="col">URL</th>
<th scope="col">Last error</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
<tbody>${deliveries.map((delivery) => deliveryRow(delivery, viewer))}</tbody></table></div>`}
${nextPageLink(next, "Older deliveries")}`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "webhook-deliveries", "Webhook deliveries", body).markup);
  });

  app.post<{ Params: { id: string } }>("/webhook-deliveries/:id/redeliver", async (request, reply) => {
    const action = operatorAction(request);
    const deliveryId = positiveInteger(request.params.id);
    if (deliveryId === undefined || !(await ctx.store.operatorRedeliverWebhook(deliveryId, action))) {
      throw new ApiError("NOT_FOUND", "There is no webhook delivery with that number.");
    }
    return reply.redirect("/console/webhook-deliveries", 303);
  });

  app.post<{ Params: { id: string } }>("/webhook-deliveries/:id/stop", async (request, reply) => {
    const action = operatorAction(request);
    const deliveryId = positiveInteger(request.params.id);
    const outcome = deliveryId === undefined ? "notFound" : await ctx.store.operatorStopWebhookDelivery(deliveryId, action);
    if (outcome === "notFound") throw new ApiError("NOT_FOUND", "There is no webhook delivery with that number.");
    if (outcome === "notPending") throw new ApiError("STATE_CONFLICT", "This delivery is no longer pending: there is nothing to stop.");
    return reply.redirect("/console/webhook-deliveries", 303);
  });
}
