/**
 * The bot's outcomes and watches (SPEC §5, §10, §14): record what the authority answered for a
 * claimed item, flag deadlines at risk, the shared circuit breaker, and the authority's capacity
 * shared by every process. Taking work from the queue is filing-queue.ts.
 *
 * Every outcome is fenced by the item's claim: it changes the item only while the worker that
 * recorded it still holds the item, and goes through `transition` with everything that follows.
 */
import type { DatabasePort, Statement } from "../port.ts";
import { isoOrNull, type WorkItemRow } from "../rows.ts";
import type { AuthorityBreaker, ItemOutcome, Store, WebhookEventType } from "../store.ts";
import type { WorkItemStatus } from "../../domain/views.ts";
import { chooseSlot, reserveSend, WAITING_MARK_MS, type CallKind, type SlotState } from "../../scheduler/capacity.ts";
import { recordApplied } from "./documents.ts";
import { emitEvents } from "./events.ts";
import { SQL } from "./sql.ts";
import { FILING_SQL } from "./sql-filing.ts";
import { transition, type HistoryEntry, type MovedRow } from "./transition.ts";

type BotOperations = Pick<
  Store,
  | "recordItemOutcome"
  | "flagDeadlinesAtRisk"
  | "getAuthorityBreaker"
  | "openAuthorityBreaker"
  | "claimAuthorityBreakerProbe"
  | "closeAuthorityBreaker"
  | "takeAuthoritySlot"
  | "handOverAuthoritySlot"
  | "holdAuthoritySlot"
  | "releaseAuthoritySlot"
>;

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
      return [SQL.itemSubmitted, [...key, outcome.applicationNumber, outcome.submittedAt, outcome.nextPollAt, now]];
    case "pending":
      return [SQL.itemPending, [...key, outcome.nextPollAt, outcome.lastError, now]];
    case "succeeded":
      return [SQL.itemSucceeded, [...key, JSON.stringify(outcome.result), outcome.result.registrationNumber, now]];
    case "failed":
      return [
        SQL.itemFailed,
        [...key, JSON.stringify(outcome.error), outcome.transient ? 1 : 0, outcome.decided ? now : null, outcome.lastError ?? null, now],
      ];
    case "retried":
      return [SQL.itemRetried, [...key, outcome.nextAttemptAt, outcome.lastError, now]];
    case "applied":
      throw new Error("an applied change or withdrawal is recorded by recordApplied");
  }
}

interface CapacityRow {
  next_send_ms: number | string;
  submits_waiting_until_ms: number | string;
  polls_waiting_until_ms: number | string;
}

interface SlotRow {
  slot: number | string;
  holder: string | null;
  kind: CallKind | null;
  held_until_ms: number | string;
}

export function botOperations(db: DatabasePort): BotOperations {
  const capacityReady = new Set<string>();

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

    flagDeadlinesAtRisk(companyId, { riskBefore, now }) {
      return db.transaction(async (tx) => {
        const flagged = await tx.all<WorkItemRow>(SQL.flagDeadlinesAtRisk, [companyId, riskBefore, now]);
        flagged.sort((a, b) => Number(a.work_item_id) - Number(b.work_item_id));
        await emitEvents(tx, companyId, "workitem.deadline_at_risk", flagged, now);
        return flagged.length;
      });
    },

    async getAuthorityBreaker(authority) {
      const row = await db.one<{ state: AuthorityBreaker["state"]; until: string | Date | null; reason: string | null }>(SQL.getAuthorityBreaker, [authority]);
      return row ? { state: row.state, until: isoOrNull(row.until), reason: row.reason } : { state: "closed", until: null, reason: null };
    },

    async openAuthorityBreaker(authority, { until, now, reason = null }) {
      await db.run(SQL.openAuthorityBreaker, [authority, until, now, reason]);
    },

    async claimAuthorityBreakerProbe(authority, { owner, until, now }) {
      return (await db.run(SQL.claimAuthorityBreakerProbe, [authority, owner, until, now])) === 1;
    },

    async closeAuthorityBreaker(authority, now) {
      await db.run(SQL.closeAuthorityBreaker, [authority, now]);
    },

    async takeAuthoritySlot(authority, request) {
      const { nowMs, kind, maxConcurrency } = request;
      if (!capacityReady.has(authority)) {
        await db.run(FILING_SQL.ensureCapacity, [authority]);
        capacityReady.add(authority);
      }
      return db.transaction(async (tx) => {
        const capacity = (await tx.one<CapacityRow>(FILING_SQL.lockCapacity, [authority]))!;
        const state = {
          slots: (await tx.all<SlotRow>(FILING_SQL.capacitySlots, [authority, maxConcurrency])).map(toSlotState),
          submitsWaitingUntilMs: Number(capacity.submits_waiting_until_ms),
          pollsWaitingUntilMs: Number(capacity.polls_waiting_until_ms),
        };
        const nextSendMs = Number(capacity.next_send_ms);
        if (!request.probe) {
          const breaker = await tx.one<{ state: AuthorityBreaker["state"] }>(SQL.getAuthorityBreaker, [authority]);
          if (breaker && breaker.state !== "closed") return { kind: "breakerOpen" as const };
        }
        const slot = chooseSlot(kind, state, { maxConcurrency }, nowMs);
        if (slot === undefined) {
          // Say that this kind is kept waiting, so the other kind leaves it its share.
          const mark = nowMs + WAITING_MARK_MS;
          if (kind === "submit" && state.submitsWaitingUntilMs < nowMs + WAITING_MARK_MS / 2) state.submitsWaitingUntilMs = mark;
          else if (kind === "status" && state.pollsWaitingUntilMs < nowMs + WAITING_MARK_MS / 2) state.pollsWaitingUntilMs = mark;
          else return { kind: "wait" as const };
          await tx.run(FILING_SQL.setCapacity, [authority, nextSendMs, state.submitsWaitingUntilMs, state.pollsWaitingUntilMs]);
          return { kind: "wait" as const };
        }
        const send = reserveSend(nextSendMs, nowMs, request.maxRps);
        await tx.run(FILING_SQL.takeSlot, [authority, slot, request.holder, kind, send.sendAtMs + request.holdMs]);
        // Without a rate limit the row holds nothing a grant changes.
        if (send.nextSendMs !== nextSendMs) await tx.run(FILING_SQL.setCapacity, [authority, send.nextSendMs, state.submitsWaitingUntilMs, state.pollsWaitingUntilMs]);
        return { kind: "granted" as const, slot, sendAtMs: send.sendAtMs };
      });
    },

    async handOverAuthoritySlot(authority, { slot, from, to, kind, nowMs, holdMs, marginMs, maxConcurrency }) {
      const handed = await db.run(FILING_SQL.handOverSlot, [authority, slot, from, to, kind, nowMs + holdMs, nowMs + marginMs, nowMs, maxConcurrency]);
      return handed === 1;
    },

    async holdAuthoritySlot(authority, slot, holder, heldUntilMs) {
      await db.run(FILING_SQL.holdSlot, [authority, slot, holder, heldUntilMs]);
    },

    async releaseAuthoritySlot(authority, slot, holder) {
      await db.run(FILING_SQL.releaseSlot, [authority, slot, holder]);
    },
  };
}

const toSlotState = (row: SlotRow): SlotState => ({
  slot: Number(row.slot),
  holder: row.holder,
  kind: row.kind,
  heldUntilMs: Number(row.held_until_ms),
});
