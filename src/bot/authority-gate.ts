/**
 * Everything the bot's calls to an authority pass through (SPEC §10, §14): the authority's
 * capacity, shared by every worker process through the store (src/scheduler/capacity.ts), and
 * the circuit breaker, shared the same way (src/scheduler/breaker.ts; this process's side of it
 * is src/bot/shared-breaker.ts).
 *
 * A call waits in this process's line for its kind, asks the store for a slot (which also looks
 * at the breaker), waits for its send time (the rate limit), looks at the breaker once more when
 * it waited, and only then goes. So once the breaker is open no call leaves, not even one that
 * was already waiting.
 *
 * A call that ends hands its slot to the first call waiting in its line when the store allows
 * (`handOverAuthoritySlot`, which looks at the breaker too): one write between two calls on the
 * slot instead of a release, a wake-up and a grant of several statements.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { AuthorityMisconfiguredError, AuthorityTimeoutError, type AuthorityAdapter } from "../authority/protocol.ts";
import type { Config } from "../config.ts";
import { isRetryable } from "../lib/backoff.ts";
import { signal, Wakeup } from "../lib/concurrency.ts";
import { admission, type BreakerView } from "../scheduler/breaker.ts";
import type { CallKind } from "../scheduler/capacity.ts";
import type { SlotGrant, Store } from "../store/store.ts";
import { createSharedBreaker } from "./shared-breaker.ts";

/** What `call` answers when the breaker kept the call from being made. */
export const BREAKER_OPEN = Symbol("the authority's circuit breaker is open");

export type GateConfig = Pick<
  Config,
  "authorityMaxConcurrency" | "authorityMaxRps" | "authorityBreakerFailures" | "authorityBreakerSeconds" | "authorityTimeoutMs" | "authorityAbandonMs"
>;

export interface AuthorityGate {
  readonly adapter: AuthorityAdapter;
  /**
   * Makes one call of `kind` within the shared capacity and the breaker; BREAKER_OPEN when none
   * was made (the breaker is open, or `signal` aborted while the call waited for its turn).
   */
  call<T>(kind: CallKind, work: (adapter: AuthorityAdapter) => Promise<T>, signal?: AbortSignal): Promise<T | typeof BREAKER_OPEN>;
  /**
   * Whether a call may go now: "go" when the breaker is closed, "probe" when only its probe may
   * (after this process's probe, if one is out, has its answer), false when none may.
   */
  mayCall(): Promise<"go" | "probe" | false>;
  /**
   * When a call may go next, as epoch ms: now when the breaker is closed, its probe time when it
   * is open, and at most a refresh away while another process's probe is out (its answer is not
   * known here before that).
   */
  nextCallAt(): Promise<number>;
  /** The breaker's state as this process last saw it (the metric). */
  breakerState(): BreakerView["state"];
  /** Why the breaker is open, when the authority refused our calls themselves (the metric); null otherwise. */
  breakerReason(): string | null;
}

/** How often the first caller in line asks the store again while every slot is taken. */
const SLOT_POLL_MS = 15;
/** A slot is held past its send time for the call's timeout and this much more; a holder that died frees it then. */
const SLOT_GRACE_MS = 2000;

/** The first call in a line while it waits for a slot: a call of its kind that ends may hand it its own. */
interface Waiter {
  holder: string;
  /** Set by the call that hands its slot over: the slot, or undefined when the store said no. */
  handed?: Promise<{ slot: number; sendAtMs: number } | undefined>;
  wake: () => void;
}

export interface GateDeps {
  store: Store;
  adapter: AuthorityAdapter;
  config: GateConfig;
  /** This process's worker id: the probe's owner, and the slots' holder (with a call number). */
  owner: string;
  clock?: () => Date;
}

export function createAuthorityGate(deps: GateDeps): AuthorityGate {
  const { store, adapter, config, owner } = deps;
  const clock = deps.clock ?? (() => new Date());
  const authority = adapter.name;
  const breaker = createSharedBreaker({ store, authority, config, owner, clock });
  let calls = 0;
  const lines: Record<CallKind, Line> = { submit: new Line(), status: new Line() };
  /** Wakes the callers waiting in line when this process gives a slot back. */
  const slotFreed = new Wakeup();
  /** Without a rate limit, a call's slot may pass to the next without a grant (no send time to reserve). */
  const handOvers = config.authorityMaxRps <= 0;
  /** How long a slot is held past its send time: a holder that died frees it then. */
  const holdMs = config.authorityTimeoutMs + SLOT_GRACE_MS;
  const waiting: Partial<Record<CallKind, Waiter>> = {};

  /**
   * A slot for one call, in this process's line for `kind`; undefined when the breaker is open.
   * The first in line may be handed a slot by a call that ends while it asks the store or waits;
   * if the store granted it one meanwhile too, it gives one back.
   */
  async function takeSlot(kind: CallKind, holder: string, probe: boolean, stop?: AbortSignal): Promise<{ slot: number; sendAtMs: number } | undefined> {
    return lines[kind].inTurn(async () => {
      for (;;) {
        if (stop?.aborted) return undefined;
        const woken = signal();
        const waiter: Waiter = { holder, wake: woken.resolve };
        if (handOvers && !probe) waiting[kind] = waiter;
        let grant: SlotGrant;
        try {
          grant = await store.takeAuthoritySlot(authority, {
            holder,
            kind,
            nowMs: clock().getTime(),
            probe,
            maxConcurrency: config.authorityMaxConcurrency,
            maxRps: config.authorityMaxRps,
            holdMs,
          });
          if (grant.kind === "wait" && !waiter.handed) await Promise.race([sleep(SLOT_POLL_MS), slotFreed.next(), woken.promise]);
        } catch (error) {
          await giveBack(waiter, holder);
          throw error;
        } finally {
          if (waiting[kind] === waiter) delete waiting[kind];
        }
        if (grant.kind === "breakerOpen") breaker.forget();
        if (grant.kind === "granted" || grant.kind === "breakerOpen" || stop?.aborted) {
          await giveBack(waiter, holder);
          return grant.kind === "granted" ? grant : undefined;
        }
        const handed = await waiter.handed;
        if (handed) return handed;
      }
    });
  }

  /** A slot handed to `waiter` that it does not need after all goes back. */
  async function giveBack(waiter: Waiter, holder: string): Promise<void> {
    const handed = await waiter.handed;
    if (!handed) return;
    await store.releaseAuthoritySlot(authority, handed.slot, holder).catch(() => undefined);
    slotFreed.wake();
  }

  /** Hands a slot to the first call waiting in `kind`'s line; false when there is none or the store says no. */
  async function handOver(kind: CallKind, slot: number, from: string): Promise<boolean> {
    const next = waiting[kind];
    if (!next) return false;
    delete waiting[kind];
    const nowMs = clock().getTime();
    const handed = store
      .handOverAuthoritySlot(authority, {
        slot,
        from,
        to: next.holder,
        kind,
        nowMs,
        holdMs,
        marginMs: SLOT_GRACE_MS / 2,
        maxConcurrency: config.authorityMaxConcurrency,
      })
      .then((done) => (done ? { slot, sendAtMs: nowMs } : undefined))
      .catch(() => undefined);
    next.handed = handed;
    next.wake();
    return (await handed) !== undefined;
  }

  return {
    adapter,

    async call(kind, work, stop) {
      let probe = false;
      let seen = await breaker.current();
      // This process asks for or makes the probe: its answer decides, so wait for it instead of giving up.
      if (admission(seen, clock().getTime()) !== "go" && breaker.probeOut) {
        await breaker.probeOut;
        seen = breaker.last;
      }
      if (admission(seen, clock().getTime()) !== "go") {
        if (admission(seen, clock().getTime()) === "wait" || !(await breaker.claimProbe())) return BREAKER_OPEN;
        probe = true;
      }
      const settle = probe ? () => breaker.settleProbe() : () => {};
      calls += 1;
      const holder = `${owner}#${calls}`;
      const slot = await takeSlot(kind, holder, probe, stop).catch((error: unknown) => {
        settle();
        throw error;
      });
      if (!slot) {
        settle();
        return BREAKER_OPEN;
      }
      /** Set when the call timed out with its connection still open: the slot stays taken until it ends. */
      let connectionEnded: Promise<void> | undefined;
      try {
        const waitMs = slot.sendAtMs - clock().getTime();
        if (waitMs > 0) {
          await sleep(waitMs);
          // It waited: the breaker may have opened meanwhile, and then this call does not go.
          if (!probe && (await breaker.current(true)).state !== "closed") return BREAKER_OPEN;
        }
        const answer = await work(adapter).catch(async (error: unknown): Promise<typeof BREAKER_OPEN> => {
          // The authority refused the call itself (401/403/404/405): our fault, not the document's.
          // Filing stops as for an open breaker, with the reason for operators; no attempt is spent.
          if (error instanceof AuthorityMisconfiguredError) {
            await breaker.refused(error.message);
            return BREAKER_OPEN;
          }
          if (error instanceof AuthorityTimeoutError) connectionEnded = error.connectionEnded;
          await breaker.afterAnswer(isRetryable(error) ? "transient" : "answered", probe);
          throw error;
        });
        if (answer !== BREAKER_OPEN) await breaker.afterAnswer("answered", probe);
        return answer;
      } finally {
        settle();
        if (connectionEnded) void holdWhileConnected(slot, holder, connectionEnded);
        else if (probe || !(await handOver(kind, slot.slot, holder))) {
          await store.releaseAuthoritySlot(authority, slot.slot, holder).catch(() => undefined);
          slotFreed.wake();
        }
      }
    },

    mayCall: () => breaker.mayCall(),
    nextCallAt: () => breaker.nextCallAt(),
    breakerState: () => breaker.last.state,
    breakerReason: () => (breaker.last.state === "closed" ? null : (breaker.last.reason ?? null)),
  };

  /**
   * A call that timed out keeps its slot while its connection is open (SPEC §20): the authority
   * is still working on it. The connection ends at the latest `authorityAbandonMs` after it was
   * sent, so the store holds the slot that long (and frees it then if this process died).
   */
  async function holdWhileConnected(slot: { slot: number; sendAtMs: number }, holder: string, connectionEnded: Promise<void>): Promise<void> {
    await store.holdAuthoritySlot(authority, slot.slot, holder, slot.sendAtMs + config.authorityAbandonMs + SLOT_GRACE_MS).catch(() => undefined);
    await connectionEnded;
    await store.releaseAuthoritySlot(authority, slot.slot, holder).catch(() => undefined);
    slotFreed.wake();
  }
}

/** This process's callers of one kind, one at a time asking the store (first come, first served). */
class Line {
  private tail: Promise<unknown> = Promise.resolve();

  inTurn<R>(work: () => Promise<R>): Promise<R> {
    const turn = this.tail.then(work, work);
    this.tail = turn.catch(() => undefined);
    return turn;
  }
}

