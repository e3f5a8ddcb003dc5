/**
 * POST /api/Operator/Webhooks/Deliveries/{deliveryId}/Redeliver (SPEC §12.2): the integrator's
 * Redeliver (§11.3) for a delivery of any company: one new attempt soon, same webhook-id.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { operatorAction, requireActingRole } from "../../operators/operator-guard.ts";
import { WebhookDeliveryView } from "../../webhooks/delivery-schema.ts";
import { PositiveId } from "../shared/ids.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity, ReasonBody } from "./schemas.ts";

export const DeliveryParams = Type.Object({ deliveryId: PositiveId("the delivery id (of any company)") });

export const OperatorWebhookDelivery = Type.Composite([WebhookDeliveryView, Type.Object({ companyId: PositiveId("the company the delivery belongs to") })], {
  title: "OperatorWebhookDelivery",
  description: "a webhook delivery of any company, with every attempt",
  examples: (WebhookDeliveryView.examples as Array<Record<string, unknown>>).map((delivery) => ({ ...delivery, companyId: 42, status: "pending" })),
});

export const deliveryNotFound = (deliveryId: number) => new ApiError("NOT_FOUND", `Webhook delivery ${deliveryId} does not exist.`);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: Static<typeof DeliveryParams>; Body: ReasonBody }>("/api/Operator/Webhooks/Deliveries/:deliveryId/Redeliver", {
    schema: {
      summary: "Send a webhook delivery of any company again: one new attempt soon, with the same webhook-id",
      description: "Answers 202 with the delivery, now pending and due.",
      operationId: "OperatorRedeliverWebhook",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: DeliveryParams,
      body: ReasonBody,
      response: { 202: OperatorWebhookDelivery, ...operatorResponses(400, 404, 413, 415) },
    },
    onRequest: requireActingRole,
    handler: async (request, reply) => {
      const { deliveryId } = request.params;
      if (!(await ctx.store.operatorRedeliverWebhook(deliveryId, operatorAction(request, request.body.reason)))) throw deliveryNotFound(deliveryId);
      const [delivery] = await ctx.store.listAllWebhookDeliveries({ deliveryId, limit: 1 });
      if (!delivery) throw deliveryNotFound(deliveryId);
      return reply.code(202).send(delivery);
    },
  });
}
