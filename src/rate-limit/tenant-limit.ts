/**
 * Requests per company (SPEC §8): RATE_LIMIT_TENANT_RPS sustained, bursts up to
 * RATE_LIMIT_TENANT_BURST, then 429 with Retry-After. 0 for either turns it off.
 *
 * The bucket is rate-limiter-flexible's BurstyRateLimiter: a one-second window of RPS requests
 * plus a reserve of BURST − RPS requests that refills in one window of RESERVE_REFILL_FACTOR ×
 * (BURST − RPS) / RPS seconds. From idle a company can send BURST requests at once; under
 * sustained overload it gets RPS a second plus the reserve's slow refill (at most a tenth more),
 * which is how a token bucket of size BURST and rate RPS behaves, up to that tenth.
 */
import { BurstyRateLimiter } from "rate-limiter-flexible";
import { rateLimited } from "./login-throttle.ts";
import type { LimiterFactory } from "./limiters.ts";

/** The reserve refills at a tenth of the sustained rate, so overload gets at most 10 % extra. */
const RESERVE_REFILL_FACTOR = 10;

/** Charges one request to the company; `done` gets the 429 to answer, or nothing. */
export type TenantLimit = (companyId: number, done: (refusal?: Error) => void) => void;

export function createTenantLimit(factory: LimiterFactory, rps: number, burst: number): TenantLimit | undefined {
  if (rps <= 0 || burst <= 0) return undefined;
  const sustained = factory.create({ keyPrefix: "tenant-rps", points: rps, durationSeconds: 1 });
  const reservePoints = burst - rps;
  const limiter =
    reservePoints > 0
      ? factory.wrap(
          new BurstyRateLimiter(
            sustained.raw,
            factory.create({
              keyPrefix: "tenant-burst",
              points: reservePoints,
              durationSeconds: Math.max(1, Math.ceil((RESERVE_REFILL_FACTOR * reservePoints) / rps)),
            }).raw,
          ),
          "tenant-burst",
        )
      : sustained;
  return (companyId, done) =>
    limiter.consumeOne(String(companyId), (wait) =>
      wait === undefined ? done() : done(rateLimited(wait, "Too many requests for this company; retry after the time in Retry-After.")),
    );
}
