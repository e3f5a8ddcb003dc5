/**
 * What a call made of an item, as the store records it (SPEC §5, §10): every write fenced by the
 * item's claim, the pass's counts and events, the item given back unspent when the breaker kept
 * its call, and a failed call turned into a retry or a failure with its error code.
 */
import { isRetryable, nextAttemptAt, type BackoffPolicy } from "../lib/backoff.ts";
import { itemError } from "../domain/item-errors.ts";
import type { DueItem, ItemOutcome, ItemToPoll } from "../store/store.ts";
import type { BotCounts, BotDeps, Pass } from "./pass-state.ts";

export type StepResult = ItemOutcome["kind"] | "notMade" | "claimLost";

export async function counted(pass: Pass, step: Promise<StepResult>): Promise<void> {
  const result = await step;
  if (result in pass.counts) pass.counts[result as keyof BotCounts] += 1;
}

/**
 * A call the gate kept back: the item goes back in its place, nothing spent. A filing item is due
 * again for this pass (which may go on after the probe), and its company gets its turn back.
 */
export async function giveBack(pass: Pass, item: DueItem | ItemToPoll): Promise<"notMade"> {
  const reason = pass.deps.signal?.aborted ? "the worker is stopping" : "the authority's circuit breaker is open";
  const now = pass.clock().toISOString();
  const filing = "turn" in item;
  const claim = { companyId: item.companyId, workItemId: item.workItemId, owner: pass.deps.owner, ...(filing ? { turn: item.turn } : {}) };
  // The pass's loop sees the breaker before it claims again, and waits for the probe or ends.
  await pass.deps.store.releaseItems([claim], { now, dueAt: filing ? pass.dueBefore : now, reason });
  return "notMade";
}

/** Records `outcome` under the item's claim; false when another worker took the item over. */
export async function record(pass: Pass, item: { companyId: number; workItemId: number }, outcome: ItemOutcome): Promise<boolean> {
  const claim = { companyId: item.companyId, workItemId: item.workItemId, owner: pass.deps.owner };
  return pass.deps.store.recordItemOutcome(claim, outcome, { now: pass.clock().toISOString() });
}

export function finished(pass: Pass, item: { companyId: number; workItemId: number }, result: ItemOutcome["kind"], attempts: number, started: Date): void {
  const durationMs = pass.clock().getTime() - started.getTime();
  pass.deps.events?.itemFinished?.({ companyId: item.companyId, workItemId: item.workItemId, result, attempts, durationMs });
}

/** Attempts spent once `outcome` is recorded: a transient failure spends one. */
export const attemptsAfter = (item: { attempts: number }, outcome: ItemOutcome) =>
  item.attempts + (outcome.kind === "retried" || (outcome.kind === "failed" && outcome.transient) ? 1 : 0);

/** A filing call that failed: retried after a backoff, or failed for good (not retryable, or out of attempts). */
export function failedFiling(deps: BotDeps, item: DueItem, error: unknown, now: Date): ItemOutcome {
  const lastError = describe(error);
  if (!isRetryable(error)) {
    return { kind: "failed", error: itemError("AUTHORITY_ERROR", lastError), lastError };
  }
  const failures = item.attempts + 1;
  if (failures >= deps.config.botMaxAttempts) {
    const message = `The Authority could not be reached after ${failures} attempts; last error: ${lastError}`;
    return { kind: "failed", error: itemError("AUTHORITY_UNAVAILABLE", message), transient: true, lastError };
  }
  const policy: BackoffPolicy = { baseMs: deps.config.botRetryBaseMs, maxMs: deps.config.botRetryMaxMs };
  return { kind: "retried", nextAttemptAt: nextAttemptAt(now, failures, policy, deps.random), lastError };
}

export const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 1000);
