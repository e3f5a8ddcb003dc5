/**
 * Requests per company (SPEC §8): RATE_LIMIT_TENANT_RPS sustained, bursts up to
 * RATE_LIMIT_TENANT_BURST, then 429 with Retry-After. 0 for either turns it off.
 *
 * The bucket is rate-limiter-flexible's BurstyRateLimiter: a one-second window of RPS requests
 * plus a reserve of BURST − RPS requests that refills in one window of RESERVE_REFILL_FACTOR ×
 * (BURST − RPS) / RPS seconds. From idle a company can send BURST requests at once; under
 * sustained overload it gets RPS a second plus the reserve's slow refill (at most a tenth more),
 * which is how a token bucket of size BURST and rate RPS behaves, up to that tenth.
 *
 * A bulk add counts one request per item (SPEC §11.1): `chargeMore` takes the rest of its items
 * from the same two windows. A bulk larger than the whole bucket is taken only from a full
 * bucket and leaves it in debt: both windows refuse everything until the excess has been paid
 * at RPS a second, and the reserve then refills over its own window again.
 */
import { BurstyRateLimiter } from "rate-limiter-flexible";
import type { ApiError } from "../errors.ts";
import { rateLimited } from "./login-throttle.ts";
import type { Limiter, LimiterFactory } from "./limiters.ts";

/** The reserve refills at a tenth of the sustained rate, so overload gets at most 10 % extra. */
const RESERVE_REFILL_FACTOR = 10;

export interface TenantLimit {
  /** Charges one request to the company; `done` gets the 429 to answer, or nothing. */
  charge(companyId: number, done: (refusal?: Error) => void): void;
  /**
   * Charges the rest of a request that counts as `count` requests, once `charge` has taken its
   * first: resolves to the 429 to answer (nothing more is taken then), or undefined.
   */
  chargeMore(companyId: number, count: number): Promise<ApiError | undefined>;
}

const DETAIL = "Too many requests for this company; retry after the time in Retry-After.";
const idle = { consumed: 0, msBeforeNext: 0 };

export function createTenantLimit(factory: LimiterFactory, rps: number, burst: number): TenantLimit | undefined {
  if (rps <= 0 || burst <= 0) return undefined;
  const sustained = factory.create({ keyPrefix: "tenant-rps", points: rps, durationSeconds: 1 });
  const reservePoints = Math.max(0, burst - rps);
  const reserveSeconds = Math.max(1, Math.ceil((RESERVE_REFILL_FACTOR * reservePoints) / rps));
  const reserve = reservePoints > 0 ? factory.create({ keyPrefix: "tenant-burst", points: reservePoints, durationSeconds: reserveSeconds }) : undefined;
  const limiter: Limiter = reserve ? factory.wrap(new BurstyRateLimiter(sustained.raw, reserve.raw), "tenant-burst") : sustained;
  const capacity = rps + reservePoints;

  /** Takes `fromSustained` and `fromReserve` points, or nothing when either is refused (a race). */
  async function take(key: string, fromSustained: number, fromReserve: number): Promise<ApiError | undefined> {
    const [sustainedWait, reserveWait] = await Promise.all([
      fromSustained > 0 ? sustained.consume(key, fromSustained) : undefined,
      fromReserve > 0 && reserve ? reserve.consume(key, fromReserve) : undefined,
    ]);
    if (sustainedWait === undefined && reserveWait === undefined) return undefined;
    // A refused consume still counted its points: hand back everything this call took.
    await Promise.all([
      fromSustained > 0 ? sustained.consume(key, -fromSustained) : undefined,
      fromReserve > 0 && reserve ? reserve.consume(key, -fromReserve) : undefined,
    ]);
    return rateLimited(Math.max(sustainedWait ?? 0, reserveWait ?? 0), DETAIL);
  }

  return {
    charge(companyId, done) {
      limiter.consumeOne(String(companyId), (wait) => (wait === undefined ? done() : done(rateLimited(wait, DETAIL))));
    },

    async chargeMore(companyId, count) {
      const more = count - 1;
      if (more <= 0) return undefined;
      const key = String(companyId);
      const [now, reserveNow] = await Promise.all([sustained.peek(key), reserve ? reserve.peek(key) : idle]);
      const sustainedFree = Math.max(0, rps - now.consumed);
      const reserveFree = Math.max(0, reservePoints - reserveNow.consumed);
      const free = sustainedFree + reserveFree;
      if (more <= free) {
        const fromSustained = Math.min(more, sustainedFree);
        return take(key, fromSustained, more - fromSustained);
      }
      // More than the bucket holds, and it was full but for this request's own first point.
      if (count > capacity && free + 1 >= capacity) {
        const refused = await take(key, sustainedFree, reserveFree);
        if (refused) return refused;
        const debtMs = Math.ceil(((count - capacity) / rps) * 1000);
        await Promise.all([sustained.block(key, debtMs), reserve?.block(key, debtMs + reserveSeconds * 1000)]);
        return undefined;
      }
      // The wait until the windows free enough: the whole bucket for a request larger than it.
      const needed = Math.min(more, capacity - 1);
      const resets = [
        { at: now.consumed > 0 ? now.msBeforeNext : 0, sustained: true },
        { at: reserveNow.consumed > 0 ? reserveNow.msBeforeNext : 0, sustained: false },
      ].sort((a, b) => a.at - b.at);
      let [sustainedAt, reserveAt] = [sustainedFree, reserveFree];
      let wait = resets[resets.length - 1]!.at;
      for (const reset of resets) {
        if (reset.sustained) sustainedAt = rps;
        else reserveAt = reservePoints;
        if (sustainedAt + reserveAt >= needed) {
          wait = reset.at;
          break;
        }
      }
      return rateLimited(Math.max(1, wait), DETAIL);
    },
  };
}
