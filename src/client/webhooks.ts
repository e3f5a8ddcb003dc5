/**
 * Verifies a webhook the service sent, per the Standard Webhooks specification: the signature is
 * `v1,` + base64 HMAC-SHA256 over `${webhook-id}.${webhook-timestamp}.${raw body}` with the
 * company's `whsec_` secret (base64 after the prefix). Several signatures may be sent, separated
 * by spaces (during a secret rotation's overlap the service signs with the new and the previous
 * secret); one match is enough. A receiver switching secrets may likewise pass both of its own:
 * a signature matching either is accepted.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookEvent } from "./types.ts";

export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** A webhook that must not be trusted; `message` says why. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}

/** Node's IncomingHttpHeaders, a fetch `Headers`, or a plain record. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the timestamp and now; default 300 s. */
  toleranceSeconds?: number;
  /** For tests: the current time in milliseconds. */
  now?: number;
}

/**
 * Returns the parsed event when a signature matches (one of `secret`, when given several) and
 * the timestamp is fresh; throws a `WebhookVerificationError` otherwise. Pass the raw body
 * exactly as received: re-serialised JSON does not verify.
 */
export function verifyWebhook(
  headers: WebhookHeaders,
  body: string | Uint8Array,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const secrets = typeof secret === "string" ? [secret] : secret;
  if (secrets.length === 0) throw new WebhookVerificationError("no webhook secret was given to verify with");
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const age = now - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError(`webhook-timestamp is ${age} s old, more than the ${tolerance} s tolerance`);
  if (age < -tolerance) throw new WebhookVerificationError(`webhook-timestamp is ${-age} s in the future, more than the ${tolerance} s tolerance`);

  const payload = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const expected = secrets.map((candidate) =>
    createHmac("sha256", secretKey(candidate))
      .update(`${id}.${timestamp}.`)
      .update(payload)
      .digest(),
  );
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",", 2);
    if (version !== "v1" || !signature) return false;
    const given = Buffer.from(signature, "base64");
    return expected.some((digest) => given.length === digest.length && timingSafeEqual(given, digest));
  });
  if (!matches) throw new WebhookVerificationError("no webhook-signature matches; check the secret and pass the raw body");

  let event: unknown;
  try {
    event = JSON.parse(payload.toString("utf8"));
  } catch {
    throw new WebhookVerificationError("the signed body is not JSON");
  }
  if (event === null || typeof event !== "object" || typeof (event as { type?: unknown }).type !== "string") {
    throw new WebhookVerificationError("the signed body is not a webhook event");
  }
  return event as WebhookEvent;
}

function header(headers: WebhookHeaders, name: string): string {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") {
    value = (headers as Headers).get(name);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  if (Array.isArray(value)) value = value.join(" ");
  if (typeof value !== "string" || value === "") throw new WebhookVerificationError(`the ${name} header is missing`);
  return value;
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  const key = Buffer.from(encoded, "base64");
  if (key.length === 0) throw new WebhookVerificationError("the webhook secret is empty or not base64");
  return key;
}
