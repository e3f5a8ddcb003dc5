/**
 * The filing loop of a pass (SPEC §5, §14): claims up to BOT_CLAIM_SIZE items at a time from the
 * one queue over every company (src/scheduler/order.ts), and files each: a create is submitted
 * (it becomes Submitted with the application number, Failed, or New again after a transient
 * failure, with a backoff); a change or withdrawal goes to src/bot/follow-up-filing.ts.
 *
 * Exactly-once towards the authority rests on two things: the item id (with the store's generation
 * after a restore, authority/protocol.ts) travels as the idempotency key, and every write about a call is fenced by the item's claim, so a worker whose claim was
 * taken over changes nothing, and items a dead worker left InProgress are submitted again under
 * the same key (and get the same application number) once its lease runs out.
 */
import { idempotencyKeyOf } from "../authority/protocol.ts";
import { StoreUnavailableError } from "../store/errors.ts";
import type { DueItem, ItemOutcome } from "../store/store.ts";
import { itemError } from "../domain/item-errors.ts";
import { isFollowUp } from "../domain/work-item-kinds.ts";
import { BREAKER_OPEN } from "./authority-gate.ts";
import { fileFollowUp } from "./follow-up-filing.ts";
import { inHand, timeOr } from "./hand.ts";
import { callAboutItem } from "./item-call.ts";
import { refresh } from "./laps.ts";
import { attemptsAfter, counted, failedFiling, finished, giveBack, record, type StepResult } from "./outcomes.ts";
import { leaseUntil, type Pass } from "./pass-state.ts";

export async function fileDueItems(pass: Pass): Promise<void> {
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
    // A create is submitted; a change or withdrawal is filed against its original.
    (item) => counted(pass, isFollowUp(item.kind) ? fileFollowUp(pass, item, item.kind) : submitItem(pass, item)),
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

/** Stage 1 for one item: submit it, and record Submitted, Failed (rejected, or out of attempts) or retried. */
async function submitItem(pass: Pass, item: DueItem): Promise<StepResult> {
  const { deps, clock } = pass;
  const started = clock();
  let outcome: ItemOutcome;
  try {
    const answer = await callAboutItem(pass, "submit", item, (adapter, span) => adapter.submit({ idempotencyKey: idempotencyKeyOf(item), workType: item.workType, request: item.request }, span));
    if (answer === BREAKER_OPEN) return giveBack(pass, item);
    const at = clock().toISOString();
    outcome =
      answer.kind === "accepted"
        ? { kind: "submitted", applicationNumber: answer.applicationNumber, submittedAt: at, nextPollAt: at }
        : { kind: "failed", decided: true, error: itemError("AUTHORITY_REJECTED", answer.message, answer.reasons) };
  } catch (error) {
    // The store failed, not the authority (taking a slot): the item keeps its claim, no attempt spent.
    if (error instanceof StoreUnavailableError) throw error;
    outcome = failedFiling(deps, item, error, started);
  }
  if (!(await record(pass, item, outcome))) return "claimLost";
  if (outcome.kind === "submitted") {
    deps.events?.itemSubmitted?.({ companyId: item.companyId, workItemId: item.workItemId, deadlineAt: item.deadlineAt, submittedAt: outcome.submittedAt });
    pass.filedCount += 1;
    pass.askingIdle = false;
    pass.filed.wake();
  }
  finished(pass, item, outcome.kind, attemptsAfter(item, outcome), started);
  return outcome.kind;
}
