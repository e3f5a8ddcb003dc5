/**
 * What a call made of an item (SPEC §5, §10): what the authority answered for a claimed item,
 * recorded under its claim. Taking work from the queue is filing-queue.ts; the authority's
 * capacity and breaker are capacity.ts and breaker.ts.
 *
 * Every outcome is fenced by the item's claim: it changes the item only while the worker that
 * recorded it still holds the item, and goes through `transition` with everything that follows.
 */
import type { DatabasePort, Statement } from "../port.ts";
import type { ItemOutcome, Store, WebhookEventType } from "../store.ts";
import type { WorkItemStatus } from "../../domain/views.ts";
import { recordApplied } from "./follow-ups.ts";
import { OUTCOMES_SQL } from "./sql-outcomes.ts";
import { transition, type HistoryEntry, type MovedRow } from "./transition.ts";

type OutcomesPart = Pick<Store, "recordItemOutcome">;

/** The event an outcome emits; `pending` only for the item's first status request (SPEC §10). */
function eventOf(outcome: ItemOutcome, row: MovedRow): WebhookEventType | undefined {
  switch (outcome.kind) {
    case "succeeded":
      return "workitem.succeeded";
    case "failed":
      return "workitem.failed";
    case "pending":
      return Number(row.polls) === 0 ? "workitem.submitted" : undefined;
    default:
      return undefined;
  }
}

/** The state an outcome moves the item to; none when it stays Submitted. */
const STATUS_AFTER: Record<ItemOutcome["kind"], WorkItemStatus | undefined> = {
  submitted: "Submitted",
  pending: undefined,
  succeeded: "Successful",
  failed: "Failed",
  retried: "New",
  applied: "Successful",
};

/** The state an outcome came from: a filed item (it has an application number) was Submitted, unless it was filed just now. */
function statusBefore(outcome: ItemOutcome, row: MovedRow): WorkItemStatus {
  if (outcome.kind === "submitted" || outcome.kind === "retried") return "InProgress";
  return row.application_number ? "Submitted" : "InProgress";
}

/** The authority's answer (or the error instead of one), as the item's timeline shows it. */
function attemptDetail(outcome: ItemOutcome): string {
  switch (outcome.kind) {
    case "submitted":
      return `Filed; application number ${outcome.applicationNumber}`;
    case "pending":
      return outcome.lastError ? `No decision yet (${outcome.lastError})` : "No decision yet";
    case "succeeded":
      return `Registered as ${outcome.result.registrationNumber}`;
    case "failed":
      return outcome.transient
        ? `Gave up after transient errors: ${outcome.lastError ?? outcome.error.message}`
        : `${outcome.decided ? "Rejected" : "Failed"}: ${outcome.error.code}: ${outcome.error.message}`;
    case "retried":
      return `Transient error, retried from ${outcome.nextAttemptAt}: ${outcome.lastError}`;
    case "applied":
      return "Accepted by the Authority";
  }
}

/** The statement and values that move an item to `outcome`. */
function outcomeUpdate(key: unknown[], outcome: ItemOutcome, now: string): [Statement, unknown[]] {
  switch (outcome.kind) {
    case "submitted":
      return [OUTCOMES_SQL.itemSubmitted, [...key, outcome.applicationNumber, outcome.submittedAt, outcome.nextPollAt, now]];
    case "pending":
      return [OUTCOMES_SQL.itemPending, [...key, outcome.nextPollAt, outcome.lastError, now]];
    case "succeeded":
      return [OUTCOMES_SQL.itemSucceeded, [...key, JSON.stringify(outcome.result), outcome.result.registrationNumber, now]];
    case "failed":
      return [
        OUTCOMES_SQL.itemFailed,
        [...key, JSON.stringify(outcome.error), outcome.transient ? 1 : 0, outcome.decided ? now : null, outcome.lastError ?? null, now],
      ];
    case "retried":
      return [OUTCOMES_SQL.itemRetried, [...key, outcome.nextAttemptAt, outcome.lastError, now]];
    case "applied":
      throw new Error("an applied change or withdrawal is recorded by recordApplied");
  }
}

export function outcomesStore(db: DatabasePort): OutcomesPart {
  return {
    recordItemOutcome(claim, outcome, { now }) {
      return db.transaction(async (tx) => {
        if (outcome.kind === "applied") return recordApplied(tx, claim, now);
        const [update, values] = outcomeUpdate([claim.companyId, claim.workItemId, claim.owner], outcome, now);
        const status = STATUS_AFTER[outcome.kind];
        const history: HistoryEntry[] = [{ kind: "attempt", detail: attemptDetail(outcome) }];
        if (status) history.push({ kind: "status", status, detail: outcome.kind === "failed" ? outcome.error.message : null });
        const row = await transition(tx, update, values, {
          companyId: claim.companyId,
          now,
          from: (changed) => statusBefore(outcome, changed),
          history,
          event: (changed) => eventOf(outcome, changed),
        });
        return row !== undefined;
      });
    },
  };
}
