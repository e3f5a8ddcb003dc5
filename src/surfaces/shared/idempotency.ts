/**
 * The Idempotency-Key of the adds (SPEC §4, §11.1): its header, the hash that tells "the same
 * body" from "another body", and the guard that answers 409 while the first request with a key
 * is still being committed. AddWorkItemCreate and AddWorkItemCreateBulk share one namespace of
 * keys per company, in the store and in this process.
 */
import { createHash } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { IDEMPOTENCY_RETENTION_SECONDS } from "../../retention/idempotency-sweep.ts";

export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "retry-safe submission: the same key and body within 24 h returns the first answer" }),
  ),
});
export type IdempotencyHeaders = Static<typeof IdempotencyHeaders>;

/** How the 200 of an add documents the header of a replay. */
export const IdempotencyReplayedHeader = {
  "Idempotency-Replayed": {
    type: "string",
    enum: ["true"],
    description: "`true` when this is the first answer to an earlier request with the same Idempotency-Key and body; nothing new was stored",
  },
};

/** SHA-256 of the body with keys sorted, so property order does not make a body "different". */
export function hashBody(body: unknown): string {
  return createHash("sha256").update(stableJson(body)).digest("base64url");
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}

/** What the store keeps with a key, but the hash. */
export const idempotencyRecord = (key: string, requestHash: string) => ({ key, requestHash, retentionSeconds: IDEMPOTENCY_RETENTION_SECONDS });

/** Keys whose first request is still being committed in this process, per app. */
const inFlightByApp = new WeakMap<AppContext, Set<string>>();

/**
 * Runs `work` while this process holds the company's key; another request with the same key
 * meanwhile gets 409 with Retry-After. Without a key, just runs `work`.
 */
export async function holdingIdempotencyKey<T>(ctx: AppContext, companyId: number, key: string | undefined, work: () => Promise<T>): Promise<T> {
  if (key === undefined) return work();
  let inFlight = inFlightByApp.get(ctx);
  if (!inFlight) inFlightByApp.set(ctx, (inFlight = new Set()));
  const flightKey = `${companyId}\u0000${key}`;
  if (inFlight.has(flightKey)) {
    throw new ApiError("IDEMPOTENCY_IN_FLIGHT", "The first request with this Idempotency-Key has not finished; retry shortly.", {
      headers: { "retry-after": "1" },
    });
  }
  inFlight.add(flightKey);
  try {
    return await work();
  } finally {
    inFlight.delete(flightKey);
  }
}

export const keyReused = () => new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was first used with a different body; use a new key for a new request.");
