/**
 * Failed logins per client address and per API key (SPEC §8, LOGIN_FAILURES_PER_MINUTE).
 *
 * - Per address: after N failures in a minute, every login attempt from that address gets 429,
 *   even with a right secret, until the minute is over.
 * - Per key: after N failures on one key in a minute (from anywhere) the key is "under attack".
 *   It is not locked for everyone, since then any stranger could lock an integrator out with
 *   N wrong guesses. Instead an address that has already failed on that key in the window
 *   gets 429 for it, while an address with a clean record still gets its attempt. A botnet
 *   spread over many addresses thus gets one guess per address per minute on that key, and
 *   the integrator's own servers, which do not guess, keep logging in.
 *
 * Only failures count. Each attempt reserves its point before the secret is checked, so a
 * burst of concurrent guesses cannot all slip past the check, and the point is handed back
 * when the attempt turns out not to be a failure (a success, or a 503 from the store).
 */
import { ApiError } from "../errors.ts";
import type { Limiter, LimiterFactory } from "./limiters.ts";

const WINDOW_SECONDS = 60;

/** One admitted attempt; settle it once its outcome is known. */
export interface LoginAttempt {
  settle(outcome: "failed" | "succeeded" | "undecided"): Promise<void>;
}

const noAttempt: LoginAttempt = { settle: async () => {} };

export const rateLimited = (msBeforeNext: number, detail: string) =>
  new ApiError("RATE_LIMITED", detail, { headers: { "retry-after": String(Math.max(1, Math.ceil(msBeforeNext / 1000))) } });

export class LoginThrottle {
  private readonly byAddress: Limiter | undefined;
  private readonly byKey: Limiter | undefined;
  private readonly byKeyAndAddress: Limiter | undefined;

  constructor(factory: LimiterFactory, failuresPerMinute: number) {
    if (failuresPerMinute <= 0) return;
    const spec = (keyPrefix: string) => ({ keyPrefix, points: failuresPerMinute, durationSeconds: WINDOW_SECONDS });
    this.byAddress = factory.create(spec("login-fail-addr"));
    this.byKey = factory.create(spec("login-fail-key"));
    this.byKeyAndAddress = factory.create(spec("login-fail-key-addr"));
  }

  /** Throws RATE_LIMITED (429 with Retry-After) when this attempt may not even be checked. */
  async begin(apiKey: string, address: string): Promise<LoginAttempt> {
    if (!this.byAddress || !this.byKey || !this.byKeyAndAddress) return noAttempt;
    const pair = `${apiKey}|${address}`;
    const addressWait = await this.byAddress.consume(address);
    if (addressWait !== undefined) {
      throw rateLimited(addressWait, "Too many failed logins from this address; retry after the time in Retry-After.");
    }
    const keyWait = await this.byKey.consume(apiKey);
    if (keyWait !== undefined) {
      const record = await this.byKeyAndAddress.peek(pair);
      if (record.consumed > 0) {
        await this.byAddress.consume(address, -1);
        throw rateLimited(Math.min(keyWait, record.msBeforeNext), "Too many failed logins for this API key; retry after the time in Retry-After.");
      }
    }
    await this.byKeyAndAddress.consume(pair);
    return {
      settle: async (outcome) => {
        if (outcome === "failed") return;
        await Promise.all([
          this.byAddress!.consume(address, -1),
          this.byKey!.consume(apiKey, -1),
          outcome === "succeeded" ? this.byKeyAndAddress!.reset(pair) : this.byKeyAndAddress!.consume(pair, -1),
        ]);
      },
    };
  }
}
