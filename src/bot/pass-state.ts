/**
 * What every room of a bot pass shares (SPEC §5, §10, §14): its dependencies and counts, and the
 * state its two loops (filing, src/bot/filing-loop.ts; status, src/bot/status-loop.ts) and its
 * laps (src/bot/laps.ts) read and write. The pass itself is src/bot/run-once.ts.
 */
import type { Config } from "../config.ts";
import type { Wakeup } from "../lib/concurrency.ts";
import type { ItemOutcome, Store } from "../store/store.ts";
import type { Span } from "../telemetry/spans.ts";
import type { AuthorityGate } from "./authority-gate.ts";

/** What `bot run-once` prints. */
export interface BotCounts {
  /** Batches whose items this pass filed or asked about. */
  batches: number;
  /** Items filed with the Authority (an application number received). */
  submitted: number;
  succeeded: number;
  failed: number;
  /** Transient failures at submit, left New for a later pass. */
  retried: number;
}

/** Optional hooks, e.g. for metrics or to wake the webhook dispatcher; they must not throw. */
export interface BotEvents {
  itemFinished?(info: { companyId: number; workItemId: number; result: ItemOutcome["kind"]; attempts: number; durationMs: number }): void;
  /** An item was filed: `deadlineAt` (if it has one) against `submittedAt`. */
  itemSubmitted?(info: { companyId: number; workItemId: number; deadlineAt: string | null; submittedAt: string }): void;
  runFinished?(info: { counts: BotCounts; durationMs: number; error?: unknown }): void;
  /**
   * A pass ended, or a pass that goes on under load finished a lap (LAP_MS): the bot is alive
   * and filing, though a pass that never runs out of work never reaches runFinished.
   */
  lapRecorded?(info: { finishedAt: string }): void;
}

export type BotConfig = Pick<Config, "botLeaseSeconds" | "botMaxAttempts" | "botConcurrency" | "botClaimSize" | "botRetryBaseMs" | "botRetryMaxMs" | "botPollSeconds">;

export interface BotDeps {
  store: Store;
  gate: AuthorityGate;
  config: BotConfig;
  /** This worker's id; it owns the claims it takes. */
  owner: string;
  clock?: () => Date;
  random?: () => number;
  logger?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  events?: BotEvents;
  /**
   * Shutdown: nothing more is claimed, calls not yet made are given back, calls in flight finish
   * and are recorded.
   */
  signal?: AbortSignal;
  /**
   * When the schedule would start the next pass. A pass still filing then takes up the batches
   * that arrived meanwhile and goes on with them in the same queue, so a long pass under load
   * never holds new work back until it ends. Without it (`bot run-once`) a pass files what was
   * due when it began, and ends.
   */
  nextPassAt?: () => Date | null;
  /**
   * Housekeeping that rides on the bot (the retention sweeps): it starts after each pass, and
   * after each lap of a pass that goes on, beside the filing. It must not throw.
   */
  afterLap?: () => Promise<void>;
}

/** What both loops of one pass share. */
export interface Pass {
  deps: BotDeps;
  clock: () => Date;
  /** The pass's span: each authority call's span links to it (SPEC §17). */
  span: Span;
  /** Filing work due by then is this pass's; what becomes due later waits for the next (or a refresh). */
  dueBefore: string;
  /** When to take up new batches again (deps.nextPassAt), if ever. */
  refreshAt: number;
  /** A refresh under way: claims go on meanwhile, with what was due before it. */
  refreshing?: Promise<void>;
  /** Deadlines being flagged: it holds some items for a moment, so an empty claim meanwhile is not the end. */
  flagging?: Promise<void>;
  /**
   * The part of the pass since it last reported itself. Under steady load a pass never runs out
   * of work, so every LAP_MS it does what a new pass would at its start: report the last lap to
   * the operators' overview and flag deadlines (SPEC §10, §12.2).
   */
  lap: { startedAt: Date; counts: BotCounts };
  /** deps.afterLap under way; never two at once. */
  housekeeping?: Promise<void>;
  /**
   * The status loop has nothing in hand and found nothing to ask (`askingDone` wakes then); a
   * filing makes it busy again, since its first status request is due at once.
   */
  askingIdle: boolean;
  askingDone: Wakeup;
  counts: BotCounts;
  /** The batches counted in `counts.batches`. */
  batches: Set<string>;
  /** Why the pass stopped early; undefined while it goes on. */
  stop?: { kind: "breakerOpen" } | { kind: "failure"; error: unknown };
  /** Wakes whenever an item was filed (or filing ended): there may be a status request due. */
  filed: Wakeup;
  /** Items filed so far: the status loop compares it across a claim, so a filing meanwhile is not missed. */
  filedCount: number;
  filingDone: boolean;
}

export const going = (pass: Pass) => pass.stop === undefined && !pass.deps.signal?.aborted;
export const leaseUntil = (pass: Pass) => new Date(pass.clock().getTime() + pass.deps.config.botLeaseSeconds * 1000).toISOString();
