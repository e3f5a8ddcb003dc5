/**
 * The operator API (SPEC §12.2): what the people who run the service read and do, across
 * companies. Every route runs behind the operator guard; the state-changing ones also need a
 * role that may act. A query parameter a route does not declare is a 400 here (SPEC §24).
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { answerNoStore } from "../../http/no-store.ts";
import { refuseUnknownQueryParameters } from "../../http/query-shape.ts";
import { createOperatorGuard } from "../../operators/operator-guard.ts";
import * as cancelWorkItem from "./cancel-work-item.ts";
import * as eraseCompany from "./erase-company.ts";
import * as exportCompany from "./export-company.ts";
import * as getWorkItem from "./get-work-item.ts";
import * as listAudit from "./list-audit.ts";
import * as listErasures from "./list-erasures.ts";
import * as listWorkItems from "./list-work-items.ts";
import * as overview from "./overview.ts";
import * as pauseBot from "./pause-bot.ts";
import * as redeliverWebhook from "./redeliver-webhook.ts";
import * as resumeBot from "./resume-bot.ts";
import * as retryWorkItem from "./retry-work-item.ts";
import * as retryWorkItems from "./retry-work-items.ts";
import * as stopWebhookDelivery from "./stop-webhook-delivery.ts";

export const routes = [overview, listWorkItems, getWorkItem, retryWorkItem, retryWorkItems, cancelWorkItem, pauseBot, resumeBot, redeliverWebhook, stopWebhookDelivery, listAudit, exportCompany, eraseCompany, listErasures];

export { OPERATOR_SECURITY_SCHEME } from "./schemas.ts";

export async function registerOperator(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const guard = createOperatorGuard(ctx);
  await app.register(async (surface) => {
    answerNoStore(surface);
    refuseUnknownQueryParameters(surface);
    surface.addHook("onRequest", guard);
    for (const route of routes) route.register(surface, ctx);
  });
}
