/**
 * One bot pass (SPEC §5, §10, §14). First, company by company (BOT_CONCURRENCY at once): take up
 * its batches (close the non-empty Open ones; their New items join the filing queue) and flag
 * items whose deadline is near. Then two loops share the authority's capacity until the work
 * due at the start is done:
 * - filing: claim up to BOT_CLAIM_SIZE items at a time from the one queue over every company
 *   (src/scheduler/order.ts), and submit each (it becomes Submitted with the application number,
 *   Failed, or New again after a transient failure, with a backoff);
 * - status: claim Submitted items whose next status request is due, and ask about each (it
 *   becomes Successful, Failed, or stays Submitted with a later poll). The first poll is due at
 *   once, so with an authority that decides at once one pass files and decides.
 *
 * A change or withdraw item (SPEC §15) is filed the same way, in the same queue, against its
 * original's application number; the store let it into the queue only once its original was
 * filed and the earlier ones of that original were done. One whose original closed meanwhile,
 * or a change past its cutoff, fails without a call.
 *
 * Outcomes are stored as data: results, reasons, attempts, last error and the next time. Calls go
 * through the AuthorityGate (the shared capacity and circuit breaker); a call the breaker keeps
 * back spends nothing, and its item is given back in its place at once.
 *
 * Exactly-once towards the authority rests on two things: the item id travels as the idempotency
 * key of submit, and every write about a call is fenced by the item's claim, so a worker whose
 * claim was taken over changes nothing, and items a dead worker left InProgress are submitted
 * again under the same key (and get the same application number) once its lease runs out.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../config.ts";
import { isRetryable, nextAttemptAt, type BackoffPolicy } from "../lib/backoff.ts";
import { forEachConcurrently, Wakeup } from "../lib/concurrency.ts";
import { hardTimeout } from "../lib/hard-timeout.ts";
import { StoreUnavailableError } from "../store/errors.ts";
import type { DueItem, ItemOutcome, ItemToPoll, Store } from "../store/store.ts";
import { originalClosed } from "../domain/follow-ups.ts";
import { BREAKER_OPEN, type AuthorityGate } from "./authority-gate.ts";

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

/** How long before its deadline an item not yet filed is announced as at risk (SPEC §10). */
export const DEADLINE_RISK_MS = 2 * 3600_000;
/** How often a pass that goes on reports itself and flags deadlines again: as often as the default schedule starts one. */
const LAP_MS = 60_000;
/** The longest wait between two status requests. */
const MAX_POLL_INTERVAL_MS = 5 * 60_000;

/** What both loops of one pass share. */
interface Pass {
  deps: BotDeps;
  clock: () => Date;
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

export async function runBotOnce(deps: BotDeps): Promise<BotCounts> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const counts: BotCounts = { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 };
  try {
    const watched = await takeUpBatches(deps);
    const pass: Pass = {
      deps,
      clock,
      dueBefore: clock().toISOString(),
      refreshAt: deps.nextPassAt?.()?.getTime() ?? Number.POSITIVE_INFINITY,
      lap: { startedAt: started, counts: { ...counts } },
      counts,
      batches: new Set(),
      filed: new Wakeup(),
      filedCount: 0,
      filingDone: false,
      askingIdle: false,
      askingDone: new Wakeup(),
    };
    // Deadlines are watched beside the filing: the slots need not wait for every company's look.
    flagDeadlines(pass, watched, started);
    await fileAndAsk(pass);
    // A refresh or a flagging begun before the pass stopped early is not left running.
    await pass.refreshing;
    await pass.flagging;
    if (pass.stop?.kind === "failure") throw pass.stop.error;
    await recordLap(pass);
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime() });
    await pass.housekeeping;
    return counts;
  } catch (error) {
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime(), error });
    throw error;
  }
}

/**
 * Company by company (every statement names its company; docs/scaling.md), several at once:
 * the companies' new batches into the queue. Returns every company with unfinished batches,
 * whose deadlines are watched.
 */
async function takeUpBatches(deps: BotDeps): Promise<number[]> {
  const clock = deps.clock ?? (() => new Date());
  const companies = await deps.store.companiesWithBotWork();
  await eachCompany(deps, companies.filter((company) => company.toQueue).map((company) => company.companyId), (companyId) => deps.store.queueBatches(companyId, clock().toISOString()));
  return companies.map((company) => company.companyId);
}

/**
 * Items not filed two hours after `from` announced at risk (paused work types' too), beside the
 * filing: `pass.flagging` is under way until every company was looked at.
 */
function flagDeadlines(pass: Pass, companies: number[], from: Date): void {
  const { deps, clock } = pass;
  const riskBefore = new Date(from.getTime() + DEADLINE_RISK_MS).toISOString();
  const flagging: Promise<void> = Promise.all([
    pass.flagging,
    eachCompany(deps, companies, (companyId) => deps.store.flagDeadlinesAtRisk(companyId, { riskBefore, now: clock().toISOString() })),
  ])
    .then(() => undefined)
    .catch((error: unknown) => {
      pass.stop ??= { kind: "failure", error };
    })
    .finally(() => {
      if (pass.flagging === flagging) pass.flagging = undefined;
    });
  pass.flagging = flagging;
}

/** The operators' overview shows the last pass (or lap of a long one) of any worker (SPEC §12.2). */
async function recordLap(pass: Pass): Promise<void> {
  const { startedAt, counts: before } = pass.lap;
  const now = pass.clock();
  const since = (key: keyof BotCounts) => pass.counts[key] - before[key];
  await pass.deps.store.recordBotPass({
    startedAt: startedAt.toISOString(),
    finishedAt: now.toISOString(),
    submitted: since("submitted"),
    succeeded: since("succeeded"),
    failed: since("failed"),
    retried: since("retried"),
  });
  pass.lap = { startedAt: now, counts: { ...pass.counts } };
  pass.deps.events?.lapRecorded?.({ finishedAt: now.toISOString() });
  const { afterLap } = pass.deps;
  if (afterLap) pass.housekeeping = (pass.housekeeping ?? Promise.resolve()).then(afterLap);
}

/** BOT_CONCURRENCY companies at once; the first failure stops starting more, and is thrown once the rest are done. */
async function eachCompany(deps: BotDeps, companies: number[], work: (companyId: number) => Promise<unknown>): Promise<void> {
  const failure: { error?: unknown } = {};
  await forEachConcurrently(companies, deps.config.botConcurrency, async (companyId) => {
    if (deps.signal?.aborted || "error" in failure) return;
    try {
      await work(companyId);
    } catch (error) {
      if (!("error" in failure)) failure.error = error;
    }
  });
  if ("error" in failure) throw failure.error;
}

const going = (pass: Pass) => pass.stop === undefined && !pass.deps.signal?.aborted;
const leaseUntil = (pass: Pass) => new Date(pass.clock().getTime() + pass.deps.config.botLeaseSeconds * 1000).toISOString();

/**
 * Keeps up to BOT_CLAIM_SIZE items in hand, claiming more when half of them are done: the items
 * wait in the gate's line in queue order, so the authority's slots never idle while a claim is
 * on its way.
 */
async function inHand<I extends { companyId: number; workBatchId: number; workItemId: number }>(
  pass: Pass,
  claim: (limit: number) => Promise<I[]>,
  work: (item: I) => Promise<void>,
  whenEmpty: () => Promise<boolean>,
  /** When to claim again even if none of the items in hand is done (the next refresh), if ever. */
  claimAgainAt: () => number = () => Number.POSITIVE_INFINITY,
): Promise<void> {
  const size = pass.deps.config.botClaimSize;
  // Top the hand up as items finish (a quarter of a claim at least, so claims are not one by
  // one): the slots never wait for a claim's round trip.
  const topUp = Math.max(1, Math.floor(size / 4));
  const held = new Map<number, Promise<void>>();
  while (going(pass)) {
    if (size - held.size < topUp) {
      await Promise.race(held.values());
      continue;
    }
    // With the breaker open nothing is claimed, so nothing is taken and no attempt spent.
    const may = await pass.deps.gate.mayCall();
    if (!may) {
      if (await untilProbeDue(pass)) continue;
      pass.stop ??= { kind: "breakerOpen" };
      break;
    }
    // Only the probe may go: a whole hand would mostly be given back. One item, when none is in hand.
    if (may === "probe" && held.size > 0) {
      await Promise.race(held.values());
      continue;
    }
    const items = await claim(may === "probe" ? 1 : size - held.size);
    if (items.length === 0) {
      // The slots the hand leaves free would idle until one of its items is done: a refresh that
      // comes first may have work for them.
      if (held.size > 0) await timeOr(claimAgainAt() - pass.clock().getTime(), Promise.race(held.values()));
      else if (!(await whenEmpty())) break;
      continue;
    }
    for (const item of items) {
      pass.batches.add(`${item.companyId}/${item.workBatchId}`);
      pass.counts.batches = pass.batches.size;
      held.set(
        item.workItemId,
        work(item)
          .catch((error: unknown) => {
            pass.stop ??= { kind: "failure", error };
          })
          .finally(() => {
            held.delete(item.workItemId);
          }),
      );
    }
  }
  await Promise.all(held.values());
}

/**
 * Waits for `other`, or `waitMs` (when finite) or `signal`, whichever comes first; true when the
 * time ran out. The timer goes with the wait: left running, it would hold the process up to a
 * schedule period.
 */
async function timeOr(waitMs: number, other: Promise<unknown>, signal?: AbortSignal): Promise<boolean> {
  if (!Number.isFinite(waitMs)) {
    await other;
    return false;
  }
  const wait = hardTimeout(Math.max(0, waitMs), signal);
  const ended = new Promise<boolean>((resolve) => wait.signal.addEventListener("abort", () => resolve(signal?.aborted !== true), { once: true }));
  try {
    return await Promise.race([ended, other.then(() => false)]);
  } finally {
    wait.clear();
  }
}

/**
 * With the breaker open, a pass on a schedule waits for the probe's time when that comes before
 * the next pass would begin, and goes on then: the probe goes when the breaker allows it, not
 * when the next pass happens to start (up to a whole schedule period later; in the deadline
 * bench, after a 6 s outage, the authority sat idle 1–2 s instead of at most the breaker's 1 s).
 * True when it waited and the pass may go on; a pass with no schedule after it ends instead.
 */
async function untilProbeDue(pass: Pass): Promise<boolean> {
  if (!going(pass) || !Number.isFinite(pass.refreshAt)) return false;
  const at = await pass.deps.gate.nextCallAt();
  if (at >= pass.refreshAt) return false;
  const waitMs = at - pass.clock().getTime();
  if (waitMs > 0) await sleep(waitMs, undefined, { signal: pass.deps.signal }).catch(() => undefined);
  return going(pass);
}

async function fileDueItems(pass: Pass): Promise<void> {
  const { store, owner } = pass.deps;
  await inHand(
    pass,
    async (limit) => {
      if (pass.clock().getTime() >= pass.refreshAt && !pass.refreshing) {
        pass.refreshing = refresh(pass)
          .catch((error: unknown) => {
            pass.stop ??= { kind: "failure", error };
          })
          .finally(() => {
            pass.refreshing = undefined;
          });
      }
      const claim = () => store.claimFilingWork({ owner, now: pass.clock().toISOString(), dueBefore: pass.dueBefore, leaseExpiresAt: leaseUntil(pass), limit });
      const items = await claim();
      if (items.length > 0 || (!pass.refreshing && !pass.flagging)) return items;
      // Empty for now: what the refresh takes up is next, and items the flags held come free.
      await Promise.all([pass.refreshing, pass.flagging]);
      return claim();
    },
    (item) => counted(pass, submitItem(pass, item)),
    // Nothing due now. While status requests still keep the pass going, stay: when the
    // schedule's next pass is due, the refresh takes up what arrived, which would otherwise wait
    // for a pass that starts only after this one ends. The status loop's own word decides, not
    // its hand: just after the last submit, its status request may not be claimed yet.
    async () => {
      if (pass.askingIdle || !Number.isFinite(pass.refreshAt)) return false;
      // Shutdown ends the wait too. A timer may fire a millisecond before the clock reads
      // refreshAt: the pass goes on all the same (at worst the next claim comes that millisecond
      // early and waits it out), and does not end.
      const timedOut = await timeOr(pass.refreshAt - pass.clock().getTime(), pass.askingDone.next(), pass.deps.signal);
      return timedOut || pass.clock().getTime() >= pass.refreshAt;
    },
    () => pass.refreshAt,
  ).catch((error: unknown) => {
    pass.stop ??= { kind: "failure", error };
  });
}

/**
 * Both loops, until they run out of work before the schedule's next pass time. Work that ends
 * after that time takes up what arrived meanwhile and goes on: the schedule skips the pass it
 * overran, so ending would leave that work for the pass after (in the deadline bench, a pass
 * that ended just after a second began left a surge's first items a whole second unclaimed).
 */
async function fileAndAsk(pass: Pass): Promise<void> {
  for (;;) {
    pass.filingDone = false;
    pass.askingIdle = false;
    await Promise.all([
      fileDueItems(pass).finally(() => {
        pass.filingDone = true;
        pass.filed.wake();
      }),
      askAboutFiledItems(pass),
    ]);
    if (!going(pass) || pass.clock().getTime() < pass.refreshAt) return;
    try {
      await refresh(pass);
    } catch (error) {
      pass.stop ??= { kind: "failure", error };
      return;
    }
  }
}

/**
 * The pass goes on as a new one would begin: new batches join the queue, and are due from then.
 * Once a lap (LAP_MS) it also reports itself and flags deadlines; not at every refresh: looking
 * at every company's items each second would hold the store up, and two hours' notice does not
 * need it.
 */
async function refresh(pass: Pass): Promise<void> {
  const watched = await takeUpBatches(pass.deps);
  const now = pass.clock();
  pass.dueBefore = now.toISOString();
  const next = pass.deps.nextPassAt?.()?.getTime() ?? Number.POSITIVE_INFINITY;
  // A schedule that names no later time (or a past one) is asked again in a second.
  pass.refreshAt = next > now.getTime() ? next : now.getTime() + 1000;
  if (now.getTime() - pass.lap.startedAt.getTime() < LAP_MS) return;
  await recordLap(pass);
  flagDeadlines(pass, watched, now);
}

async function askAboutFiledItems(pass: Pass): Promise<void> {
  const { store, owner } = pass.deps;
  let filedBeforeClaim = pass.filedCount;
  await inHand(
    pass,
    (limit) => {
      filedBeforeClaim = pass.filedCount;
      return store.claimStatusRequests({ owner, dueBefore: pass.clock().toISOString(), leaseExpiresAt: leaseUntil(pass), limit });
    },
    (item) => counted(pass, pollItem(pass, item)),
    // Nothing to ask about now: wait for the next filing, unless filing is over. An item filed
    // while the claim was on its way has its status request due (its wake came before this wait).
    async () => {
      if (pass.filedCount !== filedBeforeClaim) return true;
      askingStopped(pass);
      if (pass.filingDone) return false;
      await pass.filed.next();
      return true;
    },
  )
    .catch((error: unknown) => {
      pass.stop ??= { kind: "failure", error };
    })
    .finally(() => {
      // Stopped for whatever reason (shutdown, a failure, the breaker): filing need not wait for it.
      askingStopped(pass);
    });
}

/** The status loop has nothing to ask (for now, or for good): filing waiting on it may go on. */
function askingStopped(pass: Pass): void {
  pass.askingIdle = true;
  pass.askingDone.wake();
}

type StepResult = ItemOutcome["kind"] | "notMade" | "claimLost";

async function counted(pass: Pass, step: Promise<StepResult>): Promise<void> {
  const result = await step;
  if (result in pass.counts) pass.counts[result as keyof BotCounts] += 1;
}

/**
 * A call the gate kept back: the item goes back in its place, nothing spent. A filing item is due
 * again for this pass (which may go on after the probe), and its company gets its turn back.
 */
async function giveBack(pass: Pass, item: DueItem | ItemToPoll): Promise<"notMade"> {
  const reason = pass.deps.signal?.aborted ? "the worker is stopping" : "the authority's circuit breaker is open";
  const now = pass.clock().toISOString();
  const filing = "turn" in item;
  const claim = { companyId: item.companyId, workItemId: item.workItemId, owner: pass.deps.owner, ...(filing ? { turn: item.turn } : {}) };
  // The pass's loop sees the breaker before it claims again, and waits for the probe or ends.
  await pass.deps.store.releaseItems([claim], { now, dueAt: filing ? pass.dueBefore : now, reason });
  return "notMade";
}

/** Records `outcome` under the item's claim; false when another worker took the item over. */
async function record(pass: Pass, item: { companyId: number; workItemId: number }, outcome: ItemOutcome): Promise<boolean> {
  const claim = { companyId: item.companyId, workItemId: item.workItemId, owner: pass.deps.owner };
  return pass.deps.store.recordItemOutcome(claim, outcome, { now: pass.clock().toISOString() });
}

function finished(pass: Pass, item: { companyId: number; workItemId: number }, result: ItemOutcome["kind"], attempts: number, started: Date): void {
  const durationMs = pass.clock().getTime() - started.getTime();
  pass.deps.events?.itemFinished?.({ companyId: item.companyId, workItemId: item.workItemId, result, attempts, durationMs });
}

/** Stage 1 for one item: submit it, and record Submitted, Failed (rejected, or out of attempts) or retried. */
async function submitItem(pass: Pass, item: DueItem): Promise<StepResult> {
  if (item.kind !== "create") return fileAmendment(pass, item);
  const { deps, clock } = pass;
  const started = clock();
  let outcome: ItemOutcome;
  try {
    const answer = await deps.gate.call("submit", (adapter) => adapter.submit({ idempotencyKey: String(item.workItemId), workType: item.workType, request: item.request }), deps.signal);
    if (answer === BREAKER_OPEN) return giveBack(pass, item);
    const at = clock().toISOString();
    outcome =
      answer.kind === "accepted"
        ? { kind: "submitted", applicationNumber: answer.applicationNumber, submittedAt: at, nextPollAt: at }
        : { kind: "failed", decided: true, error: { code: "AUTHORITY_REJECTED", message: answer.message, details: answer.reasons } };
  } catch (error) {
    // The store failed, not the authority (taking a slot): the item keeps its claim, no attempt spent.
    if (error instanceof StoreUnavailableError) throw error;
    outcome = submitFailure(deps, item, error, started);
  }
  if (!(await record(pass, item, outcome))) return "claimLost";
  if (outcome.kind === "submitted") {
    deps.events?.itemSubmitted?.({ companyId: item.companyId, workItemId: item.workItemId, deadlineAt: item.deadlineAt, submittedAt: outcome.submittedAt });
    pass.filedCount += 1;
    pass.askingIdle = false;
    pass.filed.wake();
  }
  const attempts = item.attempts + (outcome.kind === "retried" || (outcome.kind === "failed" && outcome.transient) ? 1 : 0);
  finished(pass, item, outcome.kind, attempts, started);
  return outcome.kind;
}

/** Why a change or withdrawal fails without a call, if it does (SPEC §15). */
function refusedWithoutCall(item: DueItem, now: Date): ItemOutcome | undefined {
  // A change or withdrawal always names its original (a CHECK of migration 0013).
  const original = item.original!;
  if (!original.applicationNumber || (original.status !== "Submitted" && original.status !== "Successful")) {
    return { kind: "failed", error: originalClosed(original.workItemId, original.status) };
  }
  if (item.kind === "change" && item.deadlineAt !== null && now.getTime() > Date.parse(item.deadlineAt)) {
    const message = `The change cutoff (${item.deadlineAt}) passed before the change could be filed.`;
    return { kind: "failed", error: { code: "CHANGE_CUTOFF_PASSED", message, details: [] } };
  }
  return undefined;
}

/** A change or withdraw item: filed against its original's application number; accepted, rejected or retried. */
async function fileAmendment(pass: Pass, item: DueItem): Promise<StepResult> {
  const { deps, clock } = pass;
  const started = clock();
  let outcome = refusedWithoutCall(item, started);
  if (!outcome) {
    const amendment = { idempotencyKey: String(item.workItemId), applicationNumber: item.original!.applicationNumber! };
    try {
      const answer = await deps.gate.call(
        "submit",
        (adapter) =>
          item.kind === "change"
            ? adapter.change({ ...amendment, changes: (item.request.changes ?? {}) as Record<string, unknown> })
            : adapter.withdraw({ ...amendment, reason: String(item.request.reason ?? "") }),
        deps.signal,
      );
      if (answer === BREAKER_OPEN) return giveBack(pass, item);
      outcome =
        answer.kind === "accepted"
          ? { kind: "applied" }
          : { kind: "failed", decided: true, error: { code: "AUTHORITY_REJECTED", message: answer.message, details: answer.reasons } };
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      outcome = submitFailure(deps, item, error, started);
    }
  }
  if (!(await record(pass, item, outcome))) return "claimLost";
  const attempts = item.attempts + (outcome.kind === "retried" || (outcome.kind === "failed" && outcome.transient) ? 1 : 0);
  finished(pass, item, outcome.kind, attempts, started);
  return outcome.kind === "applied" ? "succeeded" : outcome.kind;
}

function submitFailure(deps: BotDeps, item: DueItem, error: unknown, now: Date): ItemOutcome {
  const lastError = describe(error);
  if (!isRetryable(error)) {
    return { kind: "failed", error: { code: "AUTHORITY_ERROR", message: lastError, details: [] }, lastError };
  }
  const failures = item.attempts + 1;
  if (failures >= deps.config.botMaxAttempts) {
    const message = `The Authority could not be reached after ${failures} attempts; last error: ${lastError}`;
    return { kind: "failed", error: { code: "AUTHORITY_UNAVAILABLE", message, details: [] }, transient: true, lastError };
  }
  const policy: BackoffPolicy = { baseMs: deps.config.botRetryBaseMs, maxMs: deps.config.botRetryMaxMs };
  return { kind: "retried", nextAttemptAt: nextAttemptAt(now, failures, policy, deps.random), lastError };
}

/** Stage 2 for one item: ask about it, and record the decision, or when to ask again. */
async function pollItem(pass: Pass, item: ItemToPoll): Promise<StepResult> {
  const { deps, clock } = pass;
  const started = clock();
  const again = (lastError: string | null): ItemOutcome => ({ kind: "pending", nextPollAt: nextPollAt(deps, clock(), item.polls), lastError });
  let outcome: ItemOutcome;
  try {
    const answer = await deps.gate.call("status", (adapter) => adapter.status(item.applicationNumber), deps.signal);
    if (answer === BREAKER_OPEN) return giveBack(pass, item);
    switch (answer.kind) {
      case "pending":
        outcome = again(null);
        break;
      case "registered":
        outcome = { kind: "succeeded", result: { registrationNumber: answer.registrationNumber, registeredAt: answer.registeredAt } };
        break;
      case "rejected":
        outcome = { kind: "failed", decided: true, error: { code: "AUTHORITY_REJECTED", message: answer.message, details: answer.reasons } };
        break;
      case "unknown": {
        const message = `The Authority no longer knows application ${item.applicationNumber}; the item was not submitted again.`;
        outcome = { kind: "failed", error: { code: "AUTHORITY_APPLICATION_UNKNOWN", message, details: [] }, lastError: message };
        break;
      }
    }
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    // The item is filed: a failing status request never fails it, it only waits longer.
    outcome = again(describe(error));
  }
  if (!(await record(pass, item, outcome))) return "claimLost";
  finished(pass, item, outcome.kind, 0, started);
  return outcome.kind;
}

/** BOT_POLL_SECONDS after the first status request, doubling, at most five minutes. */
function nextPollAt(deps: BotDeps, now: Date, pollsBefore: number): string {
  const waitMs = Math.min(MAX_POLL_INTERVAL_MS, deps.config.botPollSeconds * 1000 * 2 ** Math.min(pollsBefore, 20));
  return new Date(now.getTime() + waitMs).toISOString();
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);
