/**
 * A webhook delivery as the integrator sees it (SPEC §11.3): the schemas the Deliveries routes
 * answer with, the OpenAPI document shows and the SDK's types come from. A delivery is one event
 * on its way to one webhookUrl; every attempt at it is listed.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WEBHOOK_EVENT_TYPES } from "../domain/event-types.ts";
import { Nullable } from "../domain/views.ts";


export const WebhookDeliveryStatus = Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")], {
  description: "pending: an attempt is due or under way; delivered: the receiver answered 2xx; failed: given up (after the 24-hour retry window, or a refused address)",
  examples: ["delivered"],
});

export const WebhookDeliveryAttempt = Type.Object(
  {
    at: Type.String({ format: "date-time", description: "when the attempt started", examples: ["2026-11-21T14:04:02.120Z"] }),
    statusCode: Nullable(Type.Integer({ minimum: 100, maximum: 599, description: "the receiver's HTTP status; null when no answer came", examples: [503] })),
    error: Nullable(Type.String({ description: "why the attempt did not deliver; null when it did", examples: ["the receiver answered 503"] })),
    durationMs: Type.Integer({ minimum: 0, description: "how long the attempt took", examples: [87] }),
  },
  { title: "WebhookDeliveryAttempt", description: "one POST of the event to the receiver" },
);

const EXAMPLE_DELIVERY = {
  deliveryId: 9001,
  eventId: "msg_2mC3bSbHfoNfKQSr7hPy3dLEVqP",
  workItemId: 4711,
  type: "workitem.succeeded",
  url: "https://integrator.example/hooks/work-items",
  status: "delivered",
  attempts: [
    { at: "2026-11-21T14:04:02.120Z", statusCode: 503, error: "the receiver answered 503", durationMs: 87 },
    { at: "2026-11-21T14:04:12.410Z", statusCode: 204, error: null, durationMs: 41 },
  ],
  nextAttemptAt: null,
  createdAt: "2026-11-21T14:04:02.000Z",
};

export const WebhookDeliveryView = Type.Object(
  {
    deliveryId: Type.Integer({ minimum: 1, description: "the delivery's id, for Redeliver", examples: [9001] }),
    eventId: Type.String({ description: "the webhook-id header of every attempt; the same on retries and redeliveries", examples: ["msg_2mC3bSbHfoNfKQSr7hPy3dLEVqP"] }),
    workItemId: Type.Integer({ minimum: 1, description: "the item the event is about", examples: [4711] }),
    type: Type.Union(
      WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
      { description: "the event's type", examples: ["workitem.succeeded"] },
    ),
    url: Type.String({ description: "where it is POSTed: the item's webhookUrl", examples: ["https://integrator.example/hooks/work-items"] }),
    status: WebhookDeliveryStatus,
    attempts: Type.Array(WebhookDeliveryAttempt, { description: "every attempt so far, oldest first" }),
    nextAttemptAt: Nullable(Type.String({ format: "date-time", description: "when the next attempt is due; null once delivered or failed" })),
    createdAt: Type.String({ format: "date-time", description: "when the event happened", examples: ["2026-11-21T14:04:02.000Z"] }),
  },
  { title: "WebhookDelivery", description: "one webhook event on its way to one receiver, with every attempt", examples: [EXAMPLE_DELIVERY] },
);
export type WebhookDeliveryView = Static<typeof WebhookDeliveryView>;

export const WebhookDeliveryPage = Type.Object(
  {
    deliveries: Type.Array(WebhookDeliveryView),
    nextCursor: Nullable(Type.String({ description: "pass as cursor to get the next page; null on the last page" })),
  },
  {
    title: "WebhookDeliveryPage",
    description: "one page of webhook deliveries, newest first",
    examples: [{ deliveries: [EXAMPLE_DELIVERY], nextCursor: "djE6OTAwMQ" }],
  },
);
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPage>;
