/**
 * POST /api/Webhooks/Deliveries/{deliveryId}/Redeliver (SPEC §11.3): one more attempt soon, even
 * for a delivery that was delivered or given up. It is the same delivery and the same event, so
 * the same webhook-id (receivers deduplicate by it), with a fresh timestamp and signature. From
 * there the usual rules hold: within the event's 24-hour retry window a failed attempt is retried
 * with backoff; after it, the attempt is the last.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { WebhookDeliveryView } from "../../webhooks/delivery-schema.ts";
import { PositiveId } from "../shared/ids.ts";

export const DeliveryParams = Type.Object({ deliveryId: PositiveId("the delivery id") });

const deliveryNotFound = (deliveryId: number) => new ApiError("NOT_FOUND", `Webhook delivery ${deliveryId} does not exist.`);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: Static<typeof DeliveryParams> }>("/api/Webhooks/Deliveries/:deliveryId/Redeliver", {
    schema: {
      summary: "Send a webhook delivery again: one new attempt soon, with the same webhook-id",
      description:
        "Answers 202 with the delivery, now pending and due. The attempt goes out within the dispatcher's poll interval (about a second), signed afresh. Takes no body.",
      operationId: "RedeliverWebhook",
      tags: ["Webhooks"],
      security: [{ bearer: [] }],
      params: DeliveryParams,
      response: {
        202: WebhookDeliveryView,
        ...guardedResponses(400, 404, 413, 415),
      },
    },
    handler: async (request, reply) => {
      const { companyId } = request.tenant;
      const { deliveryId } = request.params;
      if (!(await ctx.store.redeliverWebhook(companyId, deliveryId, new Date().toISOString()))) throw deliveryNotFound(deliveryId);
      const [delivery] = await ctx.store.listWebhookDeliveries(companyId, { deliveryId, limit: 1 });
      if (!delivery) throw deliveryNotFound(deliveryId);
      return reply.code(202).send(delivery);
    },
  });
}
