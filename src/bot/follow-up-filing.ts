/**
 * The filing of changes and withdrawals (SPEC §15): each is filed against its original's
 * application number, in the one queue, once the store let it in (its original filed, the
 * earlier follow-ups of that original done). One whose original closed meanwhile, or a change
 * past its cutoff, fails without a call.
 */
import { StoreUnavailableError } from "../store/errors.ts";
import type { DueItem, ItemOutcome } from "../store/store.ts";
import { FOLLOW_UP_WIRE, idempotencyKeyOf, type AuthorityFollowUp, type FollowUpAnswer, type FollowUpCalls } from "../authority/protocol.ts";
import { itemError, originalClosed } from "../domain/item-errors.ts";
import { FOLLOW_UP_RULES, type FollowUpKind } from "../domain/work-item-kinds.ts";
import type { Span } from "../telemetry/spans.ts";
import { BREAKER_OPEN } from "./authority-gate.ts";
import { callAboutItem } from "./item-call.ts";
import { attemptsAfter, failedFiling, finished, giveBack, record, type StepResult } from "./outcomes.ts";
import type { Pass } from "./pass-state.ts";

/** A follow-up filed as its kind's call against its original's application, with the payload its kind reads from the stored request. */
function filedAs<K extends FollowUpKind>(calls: FollowUpCalls, kind: K, followUp: AuthorityFollowUp, request: DueItem["request"], span: Span): Promise<FollowUpAnswer> {
  const call: FollowUpCalls[K] = calls[kind];
  return call({ ...followUp, ...FOLLOW_UP_WIRE[kind].payloadOf(request) }, span);
}

/** Why a change or withdrawal fails without a call, if it does (SPEC §15). */
function refusedWithoutCall(item: DueItem, kind: FollowUpKind, now: Date): ItemOutcome | undefined {
  // A change or withdrawal always names its original (a CHECK of migration 0013).
  const original = item.original!;
  if (!original.applicationNumber || (original.status !== "Submitted" && original.status !== "Successful")) {
    return { kind: "failed", error: originalClosed(original.workItemId, original.status) };
  }
  if (FOLLOW_UP_RULES[kind].cutoff && item.deadlineAt !== null && now.getTime() > Date.parse(item.deadlineAt)) {
    const message = `The change cutoff (${item.deadlineAt}) passed before the change could be filed.`;
    return { kind: "failed", error: itemError("CHANGE_CUTOFF_PASSED", message) };
  }
  return undefined;
}

/** A change or withdrawal: filed against its original's application number; accepted, rejected or retried. */
export async function fileFollowUp(pass: Pass, item: DueItem, kind: FollowUpKind): Promise<StepResult> {
  const { deps, clock } = pass;
  const started = clock();
  let outcome = refusedWithoutCall(item, kind, started);
  if (!outcome) {
    const followUp = { idempotencyKey: idempotencyKeyOf(item), applicationNumber: item.original!.applicationNumber! };
    try {
      const answer = await callAboutItem(pass, kind, item, (adapter, span) => filedAs(adapter, kind, followUp, item.request, span));
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
