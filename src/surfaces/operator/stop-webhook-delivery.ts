/**
 * POST /api/Operator/Webhooks/Deliveries/{deliveryId}/Stop (SPEC §16): gives up a pending
 * delivery of any company now, say one whose host does not resolve, instead of retrying it for
 * the rest of its window. Audited as `delivery.stop`.
 */
import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { operatorAction, requireActingRole } from "../../operators/operator-guard.ts";
import { deliveryNotFound, DeliveryParams, OperatorWebhookDelivery } from "./redeliver-webhook.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity, ReasonBody } from "./schemas.ts";

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: Static<typeof DeliveryParams>; Body: ReasonBody }>("/api/Operator/Webhooks/Deliveries/:deliveryId/Stop", {
    schema: {
      summary: "Stop retrying a pending webhook delivery of any company: it fails now, with no further attempt",
      description: "Answers 200 with the delivery, now failed; 409 when it is not pending (delivered or failed already).",
      operationId: "OperatorStopWebhookDelivery",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: DeliveryParams,
      body: ReasonBody,
      response: { 200: OperatorWebhookDelivery, ...operatorResponses(400, 404, 409, 413, 415) },
    },
    onRequest: requireActingRole,
    handler: async (request) => {
      const { deliveryId } = request.params;
      const outcome = await ctx.store.operatorStopWebhookDelivery(deliveryId, operatorAction(request, request.body.reason));
      if (outcome === "notFound") throw deliveryNotFound(deliveryId);
      const [delivery] = await ctx.store.listAllWebhookDeliveries({ deliveryId, limit: 1 });
      if (!delivery) throw deliveryNotFound(deliveryId);
      if (outcome === "notPending") throw new ApiError("STATE_CONFLICT", `Webhook delivery ${deliveryId} is ${delivery.status}, not pending: there is nothing to stop.`);
      return delivery;
    },
  });
}
