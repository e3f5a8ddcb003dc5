/**
 * The filing of changes and withdrawals (SPEC §15): each is filed against its original's
 * application number, in the one queue, once the store let it in (its original filed, the
 * earlier follow-ups of that original done). One whose original closed meanwhile, or a change
 * past its cutoff, fails without a call.
 */
import { StoreUnavailableError } from "../store/errors.ts";
import type { DueItem, ItemOutcome } from "../store/store.ts";
import { itemError, originalClosed } from "../domain/item-errors.ts";
import { BREAKER_OPEN } from "./authority-gate.ts";
import { attemptsAfter, failedFiling, finished, giveBack, record, type StepResult } from "./outcomes.ts";
import type { Pass } from "./pass-state.ts";

/** Why a change or withdrawal fails without a call, if it does (SPEC §15). */
function refusedWithoutCall(item: DueItem, now: Date): ItemOutcome | undefined {
  // A change or withdrawal always names its original (a CHECK of migration 0013).
  const original = item.original!;
  if (!original.applicationNumber || (original.status !== "Submitted" && original.status !== "Successful")) {
    return { kind: "failed", error: originalClosed(original.workItemId, original.status) };
  }
  if (item.kind === "change" && item.deadlineAt !== null && now.getTime() > Date.parse(item.deadlineAt)) {
    const message = `The change cutoff (${item.deadlineAt}) passed before the change could be filed.`;
    return { kind: "failed", error: itemError("CHANGE_CUTOFF_PASSED", message) };
  }
  return undefined;
}

/** A change or withdrawal: filed against its original's application number; accepted, rejected or retried. */
export async function fileFollowUp(pass: Pass, item: DueItem): Promise<StepResult> {
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
          : { kind: "failed", decided: true, error: itemError("AUTHORITY_REJECTED", answer.message, answer.reasons) };
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw error;
      outcome = failedFiling(deps, item, error, started);
    }
  }
  if (!(await record(pass, item, outcome))) return "claimLost";
  finished(pass, item, outcome.kind, attemptsAfter(item, outcome), started);
  return outcome.kind === "applied" ? "succeeded" : outcome.kind;
}
