/**
 * One bot run (SPEC §5, §10), company by company (BOT_CONCURRENCY companies and items at once
 * across the run): close the company's non-empty Open batch,
 * flag items whose filing deadline is near, then claim its claimable batches one at a time with
 * a lease. In a batch, first submit the due New items, earliest deadline first (each becomes
 * Submitted with the Authority's application number), then ask about the due Submitted items
 * (each becomes Successful, Failed, or stays Submitted with a later poll). The first poll of an
 * item is due at once, so with an Authority that decides at once one run files and decides.
 *
 * Outcomes are stored as data: results, reasons, attempts, last error and the next time. A
 * batch whose items are all terminal becomes Completed. Calls go through the AuthorityGate
 * (capacity and the shared circuit breaker); a call the open breaker keeps back spends nothing.
 *
 * Exactly-once towards the Authority rests on two things: the item id travels as the
 * idempotency key of submit, and every write is fenced by the batch lease, so a worker that
 * lost its lease stops, and items it left InProgress are re-submitted under the same key (and
 * get the same application number).
 */
import type { Config } from "../config.ts";
import { isRetryable, nextAttemptAt, type BackoffPolicy } from "../lib/backoff.ts";
import { forEachConcurrently, Slots } from "../lib/concurrency.ts";
import type { ClaimedBatch, DueItem, FinishBatchOutcome, ItemOutcome, ItemToPoll, Store } from "../store/store.ts";
import { BREAKER_OPEN, type AuthorityGate } from "./authority-gate.ts";

/** What `bot run-once` prints. */
export interface BotCounts {
  /** Batches this run claimed and worked on. */
  batches: number;
  /** Items filed with the Authority (an application number received). */
  submitted: number;
  succeeded: number;
  failed: number;
  /** Transient failures at submit, left New for a later run. */
  retried: number;
}

/** Optional hooks, e.g. for metrics or to wake the webhook dispatcher; they must not throw. */
export interface BotEvents {
  itemFinished?(info: { companyId: number; workItemId: number; result: ItemOutcome["kind"]; attempts: number; durationMs: number }): void;
  batchFinished?(info: { companyId: number; workBatchId: number; outcome: FinishBatchOutcome | "error" }): void;
  runFinished?(info: { counts: BotCounts; durationMs: number; error?: unknown }): void;
}

export type BotConfig = Pick<Config, "botLeaseSeconds" | "botMaxAttempts" | "botConcurrency" | "botRetryBaseMs" | "botRetryMaxMs" | "botPollSeconds">;

export interface BotDeps {
  store: Store;
  gate: AuthorityGate;
  config: BotConfig;
  /** This worker's id; it owns the leases it takes. */
  owner: string;
  clock?: () => Date;
  random?: () => number;
  logger?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
  events?: BotEvents;
  /**
   * Shutdown: no new batch or item is started; calls in flight finish and are recorded, and
   * the batch is released so another worker can go on at once.
   */
  signal?: AbortSignal;
}

/** How long before its deadline an item not yet filed is announced as at risk (SPEC §10). */
export const DEADLINE_RISK_MS = 2 * 3600_000;
/** The longest wait between two status requests. */
const MAX_POLL_INTERVAL_MS = 5 * 60_000;

export async function runBotOnce(deps: BotDeps): Promise<BotCounts> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const counts: BotCounts = { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 };
  try {
    // Work that becomes due during this run waits for the next one, so one run ends.
    const dueBefore = started.toISOString();
    const riskBefore = new Date(started.getTime() + DEADLINE_RISK_MS).toISOString();
    // BOT_CONCURRENCY items at once across the whole run, whichever companies they belong to.
    const run: Run = { dueBefore, counts, items: new Slots(deps.config.botConcurrency) };
    // Company by company (every statement names its company; docs/scaling.md), several at
    // once: most companies have one small batch, and one at a time would leave the Authority's
    // capacity idle while each waits for its own store round trips.
    const companies = await deps.store.companiesWithBotWork({ dueBefore });
    const failure: { error?: unknown } = {};
    await forEachConcurrently(companies, deps.config.botConcurrency, async ({ companyId, openBatch, claimable }) => {
      if (deps.signal?.aborted || "error" in failure) return;
      try {
        const closed = openBatch ? await deps.store.closeOpenBatches(companyId, dueBefore) : 0;
        await deps.store.flagDeadlinesAtRisk(companyId, { riskBefore, now: clock().toISOString() });
        // With the breaker open nothing is claimed, so nothing is taken and no attempt spent.
        if (claimable + closed > 0 && (await deps.gate.mayCall())) await runCompany(deps, companyId, claimable + closed, run);
      } catch (error) {
        // Stop starting companies; the ones under way finish before the run reports the error.
        if (!("error" in failure)) failure.error = error;
      }
    });
    if ("error" in failure) throw failure.error;
    const { submitted, succeeded, failed, retried } = counts;
    // The operators' overview shows the last pass of any worker (SPEC §12.2).
    await deps.store.recordBotPass({ startedAt: dueBefore, finishedAt: clock().toISOString(), submitted, succeeded, failed, retried });
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime() });
    return counts;
  } catch (error) {
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime(), error });
    throw error;
  }
}

/** What every company of one run shares. */
interface Run {
  dueBefore: string;
  counts: BotCounts;
  /** The run's item slots: BOT_CONCURRENCY. */
  items: Slots;
}

/**
 * Claims the company's claimable batches one at a time, at most `claimable` (what was due when
 * the run began, so no claim comes back empty but for a race), and works on each.
 */
async function runCompany(deps: BotDeps, companyId: number, claimable: number, run: Run): Promise<void> {
  const { dueBefore, counts } = run;
  const clock = deps.clock ?? (() => new Date());
  const seen = new Set<number>();
  while (seen.size < claimable && !deps.signal?.aborted) {
    const batch = await deps.store.claimBatch({ companyId, owner: deps.owner, dueBefore, leaseExpiresAt: leaseUntil(deps, clock()) });
    if (!batch) return;
    if (seen.has(batch.workBatchId)) {
      // Released in this very millisecond and claimable again: leave it to the next run.
      await deps.store.finishBatch(batch, { now: clock().toISOString() });
      return;
    }
    seen.add(batch.workBatchId);
    counts.batches += 1;
    await runBatch(deps, batch, run);
  }
}

const leaseUntil = (deps: BotDeps, now: Date) => new Date(now.getTime() + deps.config.botLeaseSeconds * 1000).toISOString();

/** Why a batch's work stopped early; undefined while it goes on. */
type Stop = { kind: "leaseLost" } | { kind: "breakerOpen" } | { kind: "failure"; error: unknown } | undefined;

async function runBatch(deps: BotDeps, batch: ClaimedBatch, run: Run): Promise<void> {
  const { dueBefore, counts } = run;
  const clock = deps.clock ?? (() => new Date());
  const ref = { companyId: batch.companyId, workBatchId: batch.workBatchId };
  const work = { stop: undefined as Stop };
  const going = () => work.stop === undefined && !deps.signal?.aborted;
  /** Runs `step` for one item unless the batch's work stopped; its result is counted. */
  const step = (itemWork: () => Promise<ItemOutcome["kind"] | "leaseLost" | "breakerOpen">) =>
    run.items.run(async () => {
      if (!going()) return;
      try {
        const result = await itemWork();
        if (result === "leaseLost" || result === "breakerOpen") work.stop ??= { kind: result };
        else if (result in counts) counts[result as keyof BotCounts] += 1;
      } catch (error) {
        work.stop ??= { kind: "failure", error };
      }
    });
  try {
    // Stage 1: submit the due New items (and InProgress ones a dead worker left).
    while (going()) {
      const now = clock();
      const items = await deps.store.takeDueItems(batch, {
        now: now.toISOString(),
        dueBefore,
        limit: deps.config.botConcurrency * 4,
        leaseExpiresAt: leaseUntil(deps, now),
      });
      if (items === undefined) work.stop = { kind: "leaseLost" };
      if (!items || items.length === 0) break;
      // Items skipped here stay InProgress and are submitted, same key, by whoever goes on.
      await forEachConcurrently(items, deps.config.botConcurrency, (item) => step(() => submitItem(deps, batch, item)));
    }
    // Stage 2: ask about the Submitted items due now, each once in this run.
    const pollDueBefore = clock().toISOString();
    let after = 0;
    while (going()) {
      const items = await deps.store.submittedItemsDue(batch, {
        dueBefore: pollDueBefore,
        afterWorkItemId: after,
        limit: deps.config.botConcurrency * 4,
        leaseExpiresAt: leaseUntil(deps, clock()),
      });
      if (items === undefined) work.stop = { kind: "leaseLost" };
      if (!items || items.length === 0) break;
      after = items[items.length - 1]!.workItemId;
      await forEachConcurrently(items, deps.config.botConcurrency, (item) => step(() => pollItem(deps, batch, item)));
    }
  } catch (error) {
    work.stop ??= { kind: "failure", error };
  }
  const stop = work.stop as Stop;
  if (stop?.kind === "leaseLost") {
    deps.logger?.info(ref, "lost the batch lease to another worker; leaving the batch to it");
    deps.events?.batchFinished?.({ ...ref, outcome: "leaseLost" });
    return;
  }
  if (stop?.kind === "failure") {
    deps.logger?.error({ ...ref, err: stop.error }, "bot run of a batch failed; it is retried in a later run");
    deps.events?.batchFinished?.({ ...ref, outcome: "error" });
    // Best effort: record why and release. If the store is down this fails too, and the lease
    // simply runs out; either way a later run resumes the batch.
    await deps.store.finishBatch(batch, { now: clock().toISOString(), lastError: describe(stop.error) }).catch(() => undefined);
    return;
  }
  const lastError = stop?.kind === "breakerOpen" ? "the Authority's circuit breaker opened; the batch goes on when it closes" : undefined;
  const outcome = await deps.store.finishBatch(batch, { now: clock().toISOString(), ...(lastError ? { lastError } : {}) });
  deps.events?.batchFinished?.({ ...ref, outcome });
}

/** Records `outcome` for an item under the batch lease; "leaseLost" when the write was fenced off. */
async function record(deps: BotDeps, batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome): Promise<boolean> {
  const now = (deps.clock ?? (() => new Date()))();
  return deps.store.recordItemOutcome(batch, workItemId, outcome, { now: now.toISOString(), leaseExpiresAt: leaseUntil(deps, now) });
}

function finished(deps: BotDeps, item: { companyId: number; workItemId: number }, result: ItemOutcome["kind"], attempts: number, started: Date): void {
  const durationMs = (deps.clock ?? (() => new Date()))().getTime() - started.getTime();
  deps.events?.itemFinished?.({ companyId: item.companyId, workItemId: item.workItemId, result, attempts, durationMs });
}

/** Stage 1 for one item: submit it, and record Submitted, Failed (rejected, or out of attempts) or retried. */
async function submitItem(deps: BotDeps, batch: ClaimedBatch, item: DueItem): Promise<ItemOutcome["kind"] | "leaseLost" | "breakerOpen"> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  let outcome: ItemOutcome;
  try {
    const answer = await deps.gate.call((adapter) => adapter.submit({ idempotencyKey: String(item.workItemId), workType: item.workType, request: item.request }));
    if (answer === BREAKER_OPEN) return "breakerOpen";
    const at = clock().toISOString();
    outcome =
      answer.kind === "accepted"
        ? { kind: "submitted", applicationNumber: answer.applicationNumber, submittedAt: at, nextPollAt: at }
        : { kind: "failed", decided: true, error: { code: "AUTHORITY_REJECTED", message: answer.message, details: answer.reasons } };
  } catch (error) {
    outcome = submitFailure(deps, item, error, started);
  }
  if (!(await record(deps, batch, item.workItemId, outcome))) return "leaseLost";
  const attempts = item.attempts + (outcome.kind === "retried" || (outcome.kind === "failed" && outcome.transient) ? 1 : 0);
  finished(deps, item, outcome.kind, attempts, started);
  return outcome.kind;
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
async function pollItem(deps: BotDeps, batch: ClaimedBatch, item: ItemToPoll): Promise<ItemOutcome["kind"] | "leaseLost" | "breakerOpen"> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const again = (lastError: string | null): ItemOutcome => ({ kind: "pending", nextPollAt: nextPollAt(deps, clock(), item.polls), lastError });
  let outcome: ItemOutcome;
  try {
    const answer = await deps.gate.call((adapter) => adapter.status(item.applicationNumber));
    if (answer === BREAKER_OPEN) return "breakerOpen";
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
    // The item is filed: a failing status request never fails it, it only waits longer.
    outcome = again(describe(error));
  }
  if (!(await record(deps, batch, item.workItemId, outcome))) return "leaseLost";
  finished(deps, item, outcome.kind, 0, started);
  return outcome.kind;
}

/** BOT_POLL_SECONDS after the first status request, doubling, at most five minutes. */
function nextPollAt(deps: BotDeps, now: Date, pollsBefore: number): string {
  const waitMs = Math.min(MAX_POLL_INTERVAL_MS, deps.config.botPollSeconds * 1000 * 2 ** Math.min(pollsBefore, 20));
  return new Date(now.getTime() + waitMs).toISOString();
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);
