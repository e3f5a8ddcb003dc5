/**
 * Everything the bot's calls to an Authority pass through (SPEC §10): the capacity of this
 * process (AUTHORITY_MAX_CONCURRENCY calls in flight, AUTHORITY_MAX_RPS calls a second) and
 * the circuit breaker that every process shares through the store.
 *
 * The breaker: after AUTHORITY_BREAKER_FAILURES transient failures in a row it opens for
 * AUTHORITY_BREAKER_SECONDS; no call goes while it is open, so no attempt is spent; then one
 * process wins the probe (an atomic claim in the store), and its one call closes the breaker
 * or opens it again. The state is read from the store at most once a second and written only
 * when it changes, so the per-call cost is a look at memory.
 */
import { RateLimiterMemory, RateLimiterQueue } from "rate-limiter-flexible";
import type { AuthorityAdapter } from "../authority/protocol.ts";
import type { Config } from "../config.ts";
import { isRetryable } from "../lib/backoff.ts";
import { Slots } from "../lib/concurrency.ts";
import type { AuthorityBreaker, Store } from "../store/store.ts";

/** What `call` answers when the breaker kept the call from being made. */
export const BREAKER_OPEN = Symbol("the authority's circuit breaker is open");

export type GateConfig = Pick<
  Config,
  "authorityMaxConcurrency" | "authorityMaxRps" | "authorityBreakerFailures" | "authorityBreakerSeconds" | "authorityTimeoutMs"
>;

export interface AuthorityGate {
  readonly adapter: AuthorityAdapter;
  /** Makes one call within capacity and the breaker; BREAKER_OPEN when none was made. */
  call<T>(work: (adapter: AuthorityAdapter) => Promise<T>): Promise<T | typeof BREAKER_OPEN>;
  /** Whether a call may go now: the breaker is closed, or its probe is due. */
  mayCall(): Promise<boolean>;
  /** The breaker's state as this process last saw it (the metric). */
  breakerState(): AuthorityBreaker["state"];
}

/** How stale this process's view of the shared breaker may be. */
const BREAKER_REFRESH_MS = 1000;

export interface GateDeps {
  store: Store;
  adapter: AuthorityAdapter;
  config: GateConfig;
  /** This process's worker id: the probe's owner. */
  owner: string;
  clock?: () => Date;
}

export function createAuthorityGate(deps: GateDeps): AuthorityGate {
  const { store, adapter, config, owner } = deps;
  const clock = deps.clock ?? (() => new Date());
  const authority = adapter.name;
  const slots = new Slots(config.authorityMaxConcurrency);
  const rate =
    config.authorityMaxRps > 0
      ? new RateLimiterQueue(new RateLimiterMemory({ points: config.authorityMaxRps, duration: 1 }), { maxQueueSize: Number.MAX_SAFE_INTEGER })
      : undefined;
  let breaker: AuthorityBreaker = { state: "closed", until: null };
  let readAt = 0;
  let failuresInARow = 0;
  let probing = false;

  async function current(): Promise<AuthorityBreaker> {
    const now = clock().getTime();
    if (now - readAt >= BREAKER_REFRESH_MS) {
      breaker = await store.getAuthorityBreaker(authority);
      readAt = now;
    }
    return breaker;
  }

  const probeDue = (state: AuthorityBreaker) => state.state !== "closed" && state.until !== null && Date.parse(state.until) <= clock().getTime();

  async function open(): Promise<void> {
    const now = clock();
    const until = new Date(now.getTime() + config.authorityBreakerSeconds * 1000).toISOString();
    await store.openAuthorityBreaker(authority, { until, now: now.toISOString() });
    breaker = { state: "open", until };
    readAt = now.getTime();
    failuresInARow = 0;
  }

  async function close(): Promise<void> {
    await store.closeAuthorityBreaker(authority, clock().toISOString());
    breaker = { state: "closed", until: null };
    readAt = clock().getTime();
  }

  /** True when this process got the one probe call. */
  async function claimProbe(): Promise<boolean> {
    if (probing) return false;
    const now = clock();
    // The probe's turn lasts as long as one call may: a probe whose process died frees it then.
    const until = new Date(now.getTime() + config.authorityTimeoutMs + 1000).toISOString();
    if (!(await store.claimAuthorityBreakerProbe(authority, { owner, until, now: now.toISOString() }))) {
      readAt = 0;
      return false;
    }
    breaker = { state: "halfOpen", until };
    probing = true;
    return true;
  }

  return {
    adapter,

    async call(work) {
      const state = await current();
      let probe = false;
      if (state.state !== "closed") {
        if (!probeDue(state) || !(await claimProbe())) return BREAKER_OPEN;
        probe = true;
      }
      await slots.take();
      try {
        await rate?.removeTokens(1);
        const answer = await work(adapter);
        failuresInARow = 0;
        if (probe) await close();
        return answer;
      } catch (error) {
        if (!isRetryable(error)) {
          // The Authority answered: it is up, whatever it said.
          failuresInARow = 0;
          if (probe) await close();
        } else {
          failuresInARow += 1;
          if (probe || (breaker.state === "closed" && failuresInARow >= config.authorityBreakerFailures)) await open();
        }
        throw error;
      } finally {
        if (probe) probing = false;
        slots.give();
      }
    },

    async mayCall() {
      const state = await current();
      return state.state === "closed" || (probeDue(state) && !probing);
    },

    breakerState: () => breaker.state,
  };
}
