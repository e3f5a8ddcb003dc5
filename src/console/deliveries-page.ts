/** GET /console/webhook-deliveries: deliveries across companies with their attempts; POST …/:id/redeliver with a reason. */
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

function attemptList(attempts: WebhookAttempt[]): Html {
  if (attempts.length === 0) return html`none yet`;
  const items = attempts.map(
    (attempt) => html`<li>${time(attempt.at)}: ${attempt.statusCode ?? "no answer"}${attempt.error ? html` (${attempt.error})` : ""}, ${attempt.durationMs} ms</li>`,
  );
  return html`<ol class="attempts">${items}</ol>`;
}

function deliveryRow(delivery: WebhookDeliveryRecord & { companyId: number }, viewer: Viewer): Html {
  const redeliver = mayAct(viewer.operator.role)
    ? html`<form method="post" action="/console/webhook-deliveries/${delivery.deliveryId}/redeliver" class="stacked compact">${csrfField(viewer.csrfToken)}
${reasonField(`redeliver-reason-${delivery.deliveryId}`)}<button type="submit">Redeliver</button></form>`
    : "";
  return html`<tr>
<td class="num">${delivery.deliveryId}</td><td class="num">${delivery.companyId}</td>
<td><a href="/console/work-items/${delivery.workItemId}">${delivery.workItemId}</a></td>
<td>${delivery.type}</td><td class="wrap">${delivery.url}</td><td>${statusBadge(delivery.status)}</td>
<td>${attemptList(delivery.attempts)}</td><td>${time(delivery.nextAttemptAt)}</td><td>${redeliver}</td>
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
<thead><tr><th scope="col" class="num">Delivery</th><th scope="col" class="num">Company</th><th scope="col">Item</th><th scope="col">Event</th><th scope="col">URL</th><th scope="col">Status</th>
<th scope="col">Attempts</th><th scope="col">Next attempt</th><th scope="col">Action</th></tr></thead>
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
}
