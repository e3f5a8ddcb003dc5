/**
 * Webhook events and their Standard Webhooks signature (SPEC §6), via the `standardwebhooks`
 * package: `webhook-id` (stable per event, for deduplication), `webhook-timestamp` (seconds)
 * and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the company's
 * `whsec_` secret. During a secret rotation's overlap the header carries one signature per
 * secret, space-separated, the current secret's first; a receiver accepts any one that matches.
 */
import { Webhook } from "standardwebhooks";
import type { WebhookEvent } from "./event-schema.ts";

export type { WebhookEvent } from "./event-schema.ts";

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

export function signEvent(event: WebhookEvent, eventId: string, secrets: readonly string[], sentAt: Date): SignedRequest {
  if (secrets.length === 0) throw new RangeError("a webhook needs at least one secret to be signed with");
  const body = JSON.stringify(event);
  const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, sentAt, body)).join(" ");
  return {
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": eventId,
      "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
      "webhook-signature": signature,
    },
  };
}
