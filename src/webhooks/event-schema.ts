/**
 * The webhook event as the wire carries it (SPEC §6, §10): the schema the OpenAPI document's
 * `webhooks` section shows, and the type the dispatcher signs and the SDK verifies.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../domain/event-types.ts";
import { WorkItemView } from "../domain/views.ts";

const descriptions: Record<WebhookEventType, string> = {
  "workitem.submitted": "the Authority received the item and has not decided yet (only when the run that filed it ends undecided)",
  "workitem.succeeded": "the Authority registered the item: `data.result` holds the registration",
  "workitem.failed": "the item failed: the Authority rejected it, or it could not be filed; `data.error` says why",
  "workitem.deadline_at_risk": "the item is not yet filed and its deadline is close",
  "workitem.retried": "an operator sent the failed item back to New, in the company's Open batch, to be filed again",
  "workitem.changed": "a change was applied to the document (SPEC §15): `data` is the original create item, its `request` as it stands now and its `revision`",
  "workitem.withdrawn": "the Authority accepted the withdrawal of the document: `data` is the original create item, now `Withdrawn`",
};

export const WebhookEventSchema = Type.Object(
  {
    type: Type.Union(
      WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
      { description: "what happened to the item", examples: ["workitem.succeeded"] },
    ),
    timestamp: Type.String({ format: "date-time", description: "when it happened (ISO 8601 UTC)", examples: ["2026-11-21T14:04:02.000Z"] }),
    data: WorkItemView,
  },
  {
    title: "WebhookEvent",
    description: "the body of every webhook delivery, signed per Standard Webhooks",
  },
);
export type WebhookEvent = Static<typeof WebhookEventSchema>;

const signatureHeaders = [
  {
    name: "webhook-id",
    description: "the event's id: the same on every retry of one event, so use it to deduplicate",
    example: "msg_2mC3bSbHfoNfKQSr7hPy3dLEVqP",
  },
  { name: "webhook-timestamp", description: "when this attempt was signed, in seconds since the Unix epoch", example: "1795356242" },
  {
    name: "webhook-signature",
    description: "`v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\">` with the company's whsec_ secret; several space-separated signatures may be sent",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
].map(({ name, description, example }) => ({ name, in: "header", required: true, description, schema: { type: "string" }, example }));

/** The OpenAPI 3.1 `webhooks` section: one entry per event type, all with the same envelope. */
export function webhooksSection(): Record<string, unknown> {
  const example = (WorkItemView.examples as Array<Static<typeof WorkItemView>>)[0]!;
  const section: Record<string, unknown> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const action = type.replace(/^workitem\./, "").replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
    section[type] = {
      post: {
        operationId: `WorkItem${action}Webhook`,
        summary: `${type}: ${descriptions[type]}`,
        description: "POSTed to the item's webhookUrl. Answer 2xx within 15 s; any other answer or none is retried with backoff for 24 hours.",
        tags: ["Webhooks"],
        security: [],
        parameters: signatureHeaders,
        requestBody: {
          required: true,
          content: { "application/json": { schema: WebhookEventSchema, example: { type, timestamp: "2026-11-21T14:04:02.000Z", data: example } } },
        },
        responses: {
          "2XX": { description: "received; the delivery is done" },
          "4XX": { description: "refused; retried like any other non-2xx answer" },
        },
      },
    };
  }
  return section;
}
