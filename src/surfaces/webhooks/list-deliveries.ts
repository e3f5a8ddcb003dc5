/**
 * GET /api/Webhooks/Deliveries (SPEC §11.3): the caller's webhook deliveries, newest first, each
 * with every attempt, filtered by status or work item, with keyset pagination.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { WebhookDeliveryPage, WebhookDeliveryStatus } from "../../webhooks/delivery-schema.ts";
import { PositiveId } from "../shared/ids.ts";
import { decodeCursor, encodeCursor } from "../shared/keyset-cursor.ts";

const DEFAULT_LIMIT = 50;

export const WebhookDeliveriesQuery = Type.Object({
  status: Type.Optional(WebhookDeliveryStatus),
  workItemId: Type.Optional(PositiveId("only deliveries of this work item (another company's item: an empty page)")),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_LIMIT, description: "page size, 1–200 (default 50)" })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "nextCursor of the previous page" })),
});
type WebhookDeliveriesQuery = Static<typeof WebhookDeliveriesQuery>;

const canonicalizeQuery = createCanonicalizer(WebhookDeliveriesQuery);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: WebhookDeliveriesQuery }>("/api/Webhooks/Deliveries", {
    schema: {
      summary: "List the company's webhook deliveries with every attempt, newest first, with filters and a keyset cursor",
      operationId: "ListWebhookDeliveries",
      tags: ["Webhooks"],
      security: [{ bearer: [] }],
      querystring: WebhookDeliveriesQuery,
      response: { 200: WebhookDeliveryPage, ...guardedResponses(400) },
    },
    preValidation: async (request) => {
      request.query = canonicalizeQuery(request.query) as WebhookDeliveriesQuery;
    },
    handler: async (request) => {
      const { status, workItemId, limit = DEFAULT_LIMIT, cursor } = request.query;
      const deliveries = await ctx.store.listWebhookDeliveries(request.tenant.companyId, {
        status,
        workItemId,
        beforeDeliveryId: cursor === undefined ? undefined : decodeCursor(cursor),
        limit: limit + 1,
      });
      const hasMore = deliveries.length > limit;
      if (hasMore) deliveries.length = limit;
      const last = deliveries[deliveries.length - 1];
      return { deliveries, nextCursor: hasMore && last ? encodeCursor(last.deliveryId) : null };
    },
  });
}
