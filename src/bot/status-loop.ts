/**
 * The status loop of a pass (SPEC §10): claims Submitted items whose next status request is due,
 * and asks about each; it becomes Successful, Failed, or stays Submitted with a later request.
 * The first request is due at once, so with an authority that decides at once one pass files
 * and decides. A failing status request never fails a filed item: it only waits longer.
 */
import { StoreUnavailableError } from "../store/errors.ts";
import type { ItemOutcome, ItemToPoll } from "../store/store.ts";
import { itemError } from "../domain/item-errors.ts";
import { BREAKER_OPEN } from "./authority-gate.ts";
import { inHand } from "./hand.ts";
import { callAboutItem } from "./item-call.ts";
import { counted, describe, finished, giveBack, record, type StepResult } from "./outcomes.ts";
import { leaseUntil, type BotDeps, type Pass } from "./pass-state.ts";

/** The longest wait between two status requests. */
const MAX_POLL_INTERVAL_MS = 5 * 60_000;

export async function askAboutFiledItems(pass: Pass): Promise<void> {
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
export function askingStopped(pass: Pass): void {
  pass.askingIdle = true;
  pass.askingDone.wake();
}

/** Stage 2 for one item: ask about it, and record the decision, or when to ask again. */
async function pollItem(pass: Pass, item: ItemToPoll): Promise<StepResult> {
  const { deps, clock } = pass;
  const started = clock();
  const again = (lastError: string | null): ItemOutcome => ({ kind: "pending", nextPollAt: nextPollAt(deps, clock(), item.polls), lastError });
  let outcome: ItemOutcome;
  try {
    const answer = await callAboutItem(pass, "status", item, (adapter, span) => adapter.status(item.applicationNumber, span));
    if (answer === BREAKER_OPEN) return giveBack(pass, item);
    switch (answer.kind) {
      case "pending":
        outcome = again(null);
        break;
      case "registered":
        outcome = { kind: "succeeded", result: { registrationNumber: answer.registrationNumber, registeredAt: answer.registeredAt } };
        break;
      case "rejected":
        outcome = { kind: "failed", decided: true, error: itemError("AUTHORITY_REJECTED", answer.message, answer.reasons) };
        break;
      case "unknown": {
        const message = `The Authority no longer knows application ${item.applicationNumber}; the item was not submitted again.`;
        outcome = { kind: "failed", error: itemError("AUTHORITY_APPLICATION_UNKNOWN", message), lastError: message };
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
