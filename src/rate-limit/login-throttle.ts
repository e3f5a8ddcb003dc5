/**
 * Failed logins per client address and per API key (SPEC §8, LOGIN_FAILURES_PER_MINUTE).
 *
 * - Per address: after N failures in a minute, a login from that address whose key or secret
 *   is wrong gets 429 instead of 401 until the minute is over. A right key and secret still log
 *   in (SPEC §11.5): integrators behind one shared address must not lock each other out, and a
 *   guesser learns nothing it could not learn from the per-key limit below.
 * - Per key: after N failures on one key in a minute (from anywhere) the key is "under attack".
 *   It is not locked for everyone, since then any stranger could lock an integrator out with
 *   N wrong guesses. Instead an address that has already failed on that key in the window
 *   gets 429 for it, while an address with a clean record still gets its attempt. A botnet
 *   spread over many addresses thus gets one guess per address per minute on that key, and
 *   the integrator's own servers, which do not guess, keep logging in.
 *
 * - A flood costs no hashing (SPEC §20): once an address is over its limit, an attempt for a key
 *   it already failed on, or any attempt once it has failed twice its limit, is answered 429
 *   before the secret or password is looked at. Below that, a key with a clean record from the
 *   address is still checked, so a colleague behind the same address still signs in (§11.5)
 *   unless the address floods, when telling them apart would cost the hashing the flood is after.
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
  /** Set while this address is over its limit: the answer to wrong credentials, instead of 401. */
  readonly refusal: ApiError | undefined;
  /** `refused`: turned away before any check after all (every password hash busy); its point goes back. */
  settle(outcome: "failed" | "succeeded" | "undecided" | "refused"): Promise<void>;
}

/** What became of an attempt: checked and right, checked and wrong, or refused before any check. */
export type SignInOutcome = "succeeded" | "failed" | "refused";
export type RecordSignIn = (outcome: SignInOutcome) => void;

export const rateLimited = (msBeforeNext: number, detail: string) =>
  new ApiError("RATE_LIMITED", detail, { headers: { "retry-after": String(Math.max(1, Math.ceil(msBeforeNext / 1000))) } });

export class LoginThrottle {
  private readonly byAddress: Limiter | undefined;
  private readonly byKey: Limiter | undefined;
  private readonly byKeyAndAddress: Limiter | undefined;

  /** Failures from one address in a window beyond which every attempt from it is refused unchecked. */
  private readonly floodAt: number;

  /** `counters` namespaces the counts, so console sign-ins (keyed by e-mail) and API logins never share them. */
  constructor(
    factory: LimiterFactory,
    failuresPerMinute: number,
    counters = "login-fail",
    private readonly record: RecordSignIn = () => {},
  ) {
    this.floodAt = 2 * failuresPerMinute;
    if (failuresPerMinute <= 0) return;
    const spec = (keyPrefix: string) => ({ keyPrefix, points: failuresPerMinute, durationSeconds: WINDOW_SECONDS });
    this.byAddress = factory.create(spec(`${counters}-addr`));
    this.byKey = factory.create(spec(`${counters}-key`));
    this.byKeyAndAddress = factory.create(spec(`${counters}-key-addr`));
  }

  /**
   * Throws RATE_LIMITED (429 with Retry-After) when this attempt may not even be checked: the
   * address is over its limit and failed on this key already or floods, or the per-key rule.
   * Otherwise an address over its limit is told through `refusal`, once the secret is known to
   * be wrong.
   */
  async begin(apiKey: string, address: string): Promise<LoginAttempt> {
    if (!this.byAddress || !this.byKey || !this.byKeyAndAddress) {
      return { refusal: undefined, settle: async (outcome) => (outcome === "undecided" ? undefined : this.record(outcome)) };
    }
    const pair = `${apiKey}|${address}`;
    const addressWait = await this.byAddress.consume(address);
    if (addressWait !== undefined) {
      const [fromAddress, onThisKey] = await Promise.all([this.byAddress.peek(address), this.byKeyAndAddress.peek(pair)]);
      if (fromAddress.consumed > this.floodAt || onThisKey.consumed > 0) {
        await this.byAddress.consume(address, -1);
        this.record("refused");
        throw rateLimited(addressWait, "Too many failed logins from this address; retry after the time in Retry-After.");
      }
    }
    const keyWait = await this.byKey.consume(apiKey);
    if (keyWait !== undefined) {
      const record = await this.byKeyAndAddress.peek(pair);
      if (record.consumed > 0) {
        await this.byAddress.consume(address, -1);
        this.record("refused");
        throw rateLimited(Math.min(keyWait, record.msBeforeNext), "Too many failed logins for this API key; retry after the time in Retry-After.");
      }
    }
    await this.byKeyAndAddress.consume(pair);
    return {
      refusal: addressWait === undefined ? undefined : rateLimited(addressWait, "Too many failed logins from this address; retry after the time in Retry-After."),
      settle: async (outcome) => {
        if (outcome !== "undecided") this.record(outcome);
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
