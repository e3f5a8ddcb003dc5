/**
 * One bot run (SPEC §5): company by company, close the non-empty Open batch, then claim claimable
 * batches one at a time with a lease and file their due items with the authority, at most
 * BOT_CONCURRENCY at once. Outcomes are stored as data: results, reasons, attempts, last error
 * and the next attempt time. A batch whose items are all terminal becomes Completed.
 *
 * Exactly-once towards the authority rests on two things: the item id travels as the
 * authority's idempotency key, and every write is fenced by the batch lease, so a worker that
 * lost its lease stops, and items it left InProgress are re-submitted under the same key.
 */
import type { AuthorityAdapter } from "../authority/protocol.ts";
import type { Config } from "../config.ts";
import { isRetryable, nextAttemptAt, type BackoffPolicy } from "../lib/backoff.ts";
import { forEachConcurrently } from "../lib/concurrency.ts";
import type { ClaimedBatch, DueItem, FinishBatchOutcome, ItemOutcome, Store } from "../store/store.ts";

/** What `bot run-once` prints. */
export interface BotCounts {
  /** Batches this run claimed and worked on. */
  batches: number;
  succeeded: number;
  failed: number;
  /** Transient failures left New for a later run. */
  retried: number;
}


/** Optional hooks, e.g. for metrics or to wake the webhook dispatcher; they must not throw. */
export interface BotEvents {
  itemFinished?(info: { companyId: number; workItemId: number; result: ItemOutcome["kind"]; attempts: number; durationMs: number }): void;
  batchFinished?(info: { companyId: number; workBatchId: number; outcome: FinishBatchOutcome | "error" }): void;
  runFinished?(info: { counts: BotCounts; durationMs: number; error?: unknown }): void;
}

export type BotConfig = Pick<Config, "botLeaseSeconds" | "botMaxAttempts" | "botConcurrency" | "botRetryBaseMs" | "botRetryMaxMs">;

export interface BotDeps {
  store: Store;
  adapter: AuthorityAdapter;
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

export async function runBotOnce(deps: BotDeps): Promise<BotCounts> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const counts: BotCounts = { batches: 0, succeeded: 0, failed: 0, retried: 0 };
  try {
    // Work that becomes due during this run waits for the next one, so one run ends.
    const dueBefore = started.toISOString();
    // Company by company (every statement names its company; docs/scaling.md).
    for (const { companyId, openBatch } of await deps.store.companiesWithBotWork(dueBefore)) {
      if (deps.signal?.aborted) break;
      if (openBatch) await deps.store.closeOpenBatches(companyId, dueBefore);
      await runCompany(deps, companyId, dueBefore, counts);
    }
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime() });
    return counts;
  } catch (error) {
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime(), error });
    throw error;
  }
}

/** Claims the company's claimable batches one at a time and works on each. */
async function runCompany(deps: BotDeps, companyId: number, dueBefore: string, counts: BotCounts): Promise<void> {
  const clock = deps.clock ?? (() => new Date());
  const seen = new Set<number>();
  while (!deps.signal?.aborted) {
    const batch = await deps.store.claimBatch({ companyId, owner: deps.owner, dueBefore, leaseExpiresAt: leaseUntil(deps, clock()) });
    if (!batch) return;
    if (seen.has(batch.workBatchId)) {
      // Released in this very millisecond and claimable again: leave it to the next run.
      await deps.store.finishBatch(batch, { now: clock().toISOString() });
      return;
    }
    seen.add(batch.workBatchId);
    counts.batches += 1;
    await runBatch(deps, batch, dueBefore, counts);
  }
}

const leaseUntil = (deps: BotDeps, now: Date) => new Date(now.getTime() + deps.config.botLeaseSeconds * 1000).toISOString();

async function runBatch(deps: BotDeps, batch: ClaimedBatch, dueBefore: string, counts: BotCounts): Promise<void> {
  const clock = deps.clock ?? (() => new Date());
  const ref = { companyId: batch.companyId, workBatchId: batch.workBatchId };
  let leaseLost = false;
  let failure: unknown;
  try {
    while (!leaseLost && failure === undefined && !deps.signal?.aborted) {
      const now = clock();
      const items = await deps.store.takeDueItems(batch, {
        now: now.toISOString(),
        dueBefore,
        limit: deps.config.botConcurrency * 4,
        leaseExpiresAt: leaseUntil(deps, now),
      });
      if (items === undefined) leaseLost = true;
      if (!items || items.length === 0) break;
      await forEachConcurrently(items, deps.config.botConcurrency, async (item) => {
        // Skipped items stay InProgress and are re-submitted, same key, by whoever goes on.
        if (leaseLost || failure !== undefined || deps.signal?.aborted) return;
        try {
          const result = await fileItem(deps, batch, item);
          if (result === "leaseLost") leaseLost = true;
          else counts[result] += 1;
        } catch (error) {
          failure ??= error;
        }
      });
    }
  } catch (error) {
    failure ??= error;
  }
  if (leaseLost) {
    deps.logger?.info(ref, "lost the batch lease to another worker; leaving the batch to it");
    deps.events?.batchFinished?.({ ...ref, outcome: "leaseLost" });
    return;
  }
  if (failure !== undefined) {
    deps.logger?.error({ ...ref, err: failure }, "bot run of a batch failed; it is retried in a later run");
    deps.events?.batchFinished?.({ ...ref, outcome: "error" });
    // Best effort: record why and release. If the store is down this fails too, and the lease
    // simply runs out; either way a later run resumes the batch.
    await deps.store.finishBatch(batch, { now: clock().toISOString(), lastError: describe(failure) }).catch(() => undefined);
    return;
  }
  const outcome = await deps.store.finishBatch(batch, { now: clock().toISOString() });
  deps.events?.batchFinished?.({ ...ref, outcome });
}

/** Hands one item to the authority and records the outcome; "leaseLost" when the write was fenced off. */
async function fileItem(deps: BotDeps, batch: ClaimedBatch, item: DueItem): Promise<ItemOutcome["kind"] | "leaseLost"> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const outcome = await decide(deps, item, started);
  const now = clock();
  const recorded = await deps.store.recordItemOutcome(batch, item.workItemId, outcome, { now: now.toISOString(), leaseExpiresAt: leaseUntil(deps, now) });
  if (!recorded) return "leaseLost";
  const attempts = item.attempts + (outcome.kind === "retried" || (outcome.kind === "failed" && outcome.transient) ? 1 : 0);
  deps.events?.itemFinished?.({ companyId: item.companyId, workItemId: item.workItemId, result: outcome.kind, attempts, durationMs: now.getTime() - started.getTime() });
  return outcome.kind;
}

async function decide(deps: BotDeps, item: DueItem, now: Date): Promise<ItemOutcome> {
  try {
    const decision = await deps.adapter.submit({ idempotencyKey: String(item.workItemId), workType: item.workType, request: item.request });
    if (decision.kind === "accepted") {
      return { kind: "succeeded", result: { registrationNumber: decision.registrationNumber, registeredAt: decision.registeredAt } };
    }
    return { kind: "failed", error: { code: "AUTHORITY_REJECTED", message: decision.message, details: decision.reasons } };
  } catch (error) {
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
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);
