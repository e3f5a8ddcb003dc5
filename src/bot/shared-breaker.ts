/**
 * This process's side of the circuit breaker every worker shares through the store (SPEC §10;
 * the policy is src/scheduler/breaker.ts): the breaker as last read (again at most once a
 * second, or at once when asked), this process's failures in a row, its changes written only
 * when they change something, and the one probe call, which its other calls wait for.
 */
import type { Config } from "../config.ts";
import { admission, afterCall, type BreakerView } from "../scheduler/breaker.ts";
import type { Store } from "../store/store.ts";
import { signal } from "../lib/concurrency.ts";

/** How stale this process's view of the shared breaker may be for `mayCall`. */
const BREAKER_REFRESH_MS = 1000;

export interface SharedBreaker {
  /** The breaker as this process saw it last. */
  readonly last: BreakerView;
  /** The breaker, read from the store when the last read is over a second old, or `fresh`. */
  current(fresh?: boolean): Promise<BreakerView>;
  /** The next `current` reads the store. */
  forget(): void;
  /** While this process asks for or makes the probe: resolves when its answer has opened or closed the breaker. */
  readonly probeOut: Promise<void> | undefined;
  /** True when this process got the one probe call; `settleProbe` once its answer is recorded. */
  claimProbe(): Promise<boolean>;
  settleProbe(): void;
  /** Counts an answer (or a transient failure) and opens or closes the breaker when the policy says so. */
  afterAnswer(result: "answered" | "transient", probe: boolean): Promise<void>;
  /** The authority refused the call itself (401/403/404/405): open, with the reason for operators. */
  refused(reason: string): Promise<void>;
  /** "go" when the breaker is closed, "probe" when only its probe may go (after this process's own, if one is out), false otherwise. */
  mayCall(): Promise<"go" | "probe" | false>;
  /** When a call may go next, as epoch ms (see AuthorityGate.nextCallAt). */
  nextCallAt(): Promise<number>;
}

export function createSharedBreaker(deps: {
  store: Store;
  authority: string;
  config: Pick<Config, "authorityBreakerFailures" | "authorityBreakerSeconds" | "authorityTimeoutMs">;
  owner: string;
  clock: () => Date;
}): SharedBreaker {
  const { store, authority, config, owner, clock } = deps;
  let breaker: BreakerView = { state: "closed", until: null };
  let readAt = Number.NEGATIVE_INFINITY;
  let failuresInARow = 0;
  let probeSettled: Promise<void> | undefined;
  let settle = () => {};

  async function current(fresh = false): Promise<BreakerView> {
    const now = clock().getTime();
    if (fresh || now - readAt >= BREAKER_REFRESH_MS) {
      breaker = await store.getAuthorityBreaker(authority);
      readAt = now;
    }
    return breaker;
  }

  async function change(to: "open" | "close", reason: string | null = null): Promise<void> {
    const now = clock();
    if (to === "open") {
      const until = new Date(now.getTime() + config.authorityBreakerSeconds * 1000).toISOString();
      await store.openAuthorityBreaker(authority, { until, now: now.toISOString(), reason });
      breaker = { state: "open", until, reason };
    } else {
      await store.closeAuthorityBreaker(authority, now.toISOString());
      breaker = { state: "closed", until: null };
    }
    readAt = now.getTime();
  }

  return {
    get last() {
      return breaker;
    },
    current,
    forget() {
      readAt = Number.NEGATIVE_INFINITY;
    },
    get probeOut() {
      return probeSettled;
    },

    /** Its other calls do not race it for the probe: from the first ask on they wait for the probe's answer. */
    async claimProbe() {
      if (probeSettled) return false;
      const settled = signal();
      probeSettled = settled.promise;
      settle = () => {
        probeSettled = undefined;
        settled.resolve();
      };
      const now = clock();
      // The probe's turn lasts as long as one call may: a probe whose process died frees it then.
      const until = new Date(now.getTime() + config.authorityTimeoutMs + 1000).toISOString();
      const won = await store.claimAuthorityBreakerProbe(authority, { owner, until, now: now.toISOString() }).catch((error: unknown) => {
        settle();
        throw error;
      });
      if (!won) {
        readAt = Number.NEGATIVE_INFINITY;
        settle();
        return false;
      }
      breaker = { state: "halfOpen", until, reason: breaker.reason ?? null };
      return true;
    },
    settleProbe: () => settle(),

    async afterAnswer(result, probe) {
      const next = afterCall({ failuresInARow, probe, state: breaker.state, result }, config.authorityBreakerFailures);
      failuresInARow = next.failuresInARow;
      if (next.change !== "none") await change(next.change);
    },

    async refused(reason) {
      failuresInARow = 0;
      await change("open", reason);
    },

    async mayCall() {
      // This process's probe is out: its answer tells.
      if (probeSettled) await probeSettled;
      const state = await current();
      const admitted = admission(state, clock().getTime());
      if (admitted === "go") return "go";
      return admitted === "probe" && !probeSettled ? "probe" : false;
    },

    async nextCallAt() {
      const state = await current(true);
      const now = clock().getTime();
      if (state.state === "closed" || state.until === null) return now;
      const until = Date.parse(state.until);
      return state.state === "open" ? until : Math.min(until, now + BREAKER_REFRESH_MS);
    },
  };
}
