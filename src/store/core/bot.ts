/**
 * The bot's operations (SPEC §5, §10): close and claim batches company by company, take due
 * items, find the submitted ones to ask about, record each outcome with its event,
 * flag deadlines at risk, finish the batch; and the circuit breaker shared by every process.
 *
 * Every write after a claim is fenced by the batch lease: it renews the lease first, in the
 * same transaction, and changes nothing when another worker holds the batch now. On PostgreSQL
 * that renewal (an UPDATE of the batch row) also holds the batch until commit.
 */
import type { DatabasePort, Queryable, Statement } from "../port.ts";
import { isoOrNull, toClaimedBatch, toDueItem, toItemToPoll, type ClaimedBatchRow, type DueItemRow, type ItemToPollRow, type WorkItemRow } from "../rows.ts";
import type { AuthorityBreaker, ClaimedBatch, DueItem, ItemOutcome, Store, WebhookEventType } from "../store.ts";
import type { WorkItemStatus } from "../../domain/views.ts";
import { emitEvents } from "./events.ts";
import { recordHistory } from "./operations.ts";
import { SQL } from "./sql.ts";

type BotOperations = Pick<
  Store,
  | "companiesWithBotWork"
  | "closeOpenBatches"
  | "claimBatch"
  | "takeDueItems"
  | "submittedItemsDue"
  | "recordItemOutcome"
  | "flagDeadlinesAtRisk"
  | "finishBatch"
  | "getAuthorityBreaker"
  | "openAuthorityBreaker"
  | "claimAuthorityBreakerProbe"
  | "closeAuthorityBreaker"
>;

/** The event an outcome emits; `pending` only for the item's first status request (SPEC §10). */
function eventOf(outcome: ItemOutcome, pollsBefore: number): WebhookEventType | undefined {
  switch (outcome.kind) {
    case "succeeded":
      return "workitem.succeeded";
    case "failed":
      return "workitem.failed";
    case "pending":
      return pollsBefore === 0 ? "workitem.submitted" : undefined;
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
};

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
  }
}

/** The statement and values that move an item to `outcome`; each RETURNING the item's row and polls. */
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
  }
}

export function botOperations(db: DatabasePort): BotOperations {
  return {
    async companiesWithBotWork({ dueBefore }) {
      const rows = await db.all<{ company_id: number | string; open_batch: number | string; claimable: number | string }>(SQL.companiesWithBotWork, [dueBefore]);
      return rows.map((row) => ({ companyId: Number(row.company_id), openBatch: Number(row.open_batch) === 1, claimable: Number(row.claimable) }));
    },

    closeOpenBatches(companyId, now) {
      return db.run(SQL.closeOpenBatches, [companyId, now]);
    },

    async claimBatch({ companyId, owner, dueBefore, leaseExpiresAt }) {
      const row = await db.one<ClaimedBatchRow>(SQL.claimBatch, [companyId, owner, dueBefore, leaseExpiresAt]);
      return row && toClaimedBatch(row);
    },

    takeDueItems(batch, { now, dueBefore, limit, leaseExpiresAt }) {
      return db.transaction(async (tx) => {
        if (!(await renewLease(tx, batch, leaseExpiresAt))) return undefined;
        const rows = await tx.all<DueItemRow>(SQL.markItemsInProgress, [batch.companyId, batch.workBatchId, now, dueBefore, limit]);
        const items = rows.map(toDueItem).sort(earliestDeadlineFirst);
        for (const item of items) await recordHistory(tx, batch.companyId, item.workItemId, now, { kind: "status", status: "InProgress" });
        return items;
      });
    },

    submittedItemsDue(batch, { dueBefore, afterWorkItemId, limit, leaseExpiresAt }) {
      return db.transaction(async (tx) => {
        if (!(await renewLease(tx, batch, leaseExpiresAt))) return undefined;
        const rows = await tx.all<ItemToPollRow>(SQL.submittedItemsDue, [batch.companyId, batch.workBatchId, dueBefore, afterWorkItemId, limit]);
        return rows.map(toItemToPoll);
      });
    },

    recordItemOutcome(batch, workItemId, outcome, { now, leaseExpiresAt }) {
      return db.transaction(async (tx) => {
        if (!(await renewLease(tx, batch, leaseExpiresAt))) return false;
        const [update, values] = outcomeUpdate([batch.companyId, batch.workBatchId, workItemId], outcome, now);
        const changed = await tx.one<WorkItemRow & { polls: number | string }>(update, values);
        if (!changed) return false;
        await recordHistory(tx, batch.companyId, workItemId, now, { kind: "attempt", detail: attemptDetail(outcome) });
        const status = STATUS_AFTER[outcome.kind];
        if (status) await recordHistory(tx, batch.companyId, workItemId, now, { kind: "status", status, detail: outcome.kind === "failed" ? outcome.error.message : null });
        const eventType = eventOf(outcome, Number(changed.polls));
        if (eventType) await emitEvents(tx, batch.companyId, eventType, [changed], now);
        return true;
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

    finishBatch(batch, { now, lastError }) {
      return db.transaction(async (tx) => {
        const holder = await tx.one<{ status: string; lease_owner: string | null }>(SQL.lockBatchLease, [batch.companyId, batch.workBatchId]);
        if (holder?.status !== "Processing" || holder.lease_owner !== batch.leaseOwner) return "leaseLost";
        const key = [batch.companyId, batch.workBatchId, batch.leaseOwner];
        const waiting = (await tx.one<{ waiting: number | string; next_run_at: string | Date | null }>(SQL.waitingItems, [batch.companyId, batch.workBatchId, now]))!;
        if (Number(waiting.waiting) === 0) {
          await tx.run(SQL.completeBatch, [...key, now]);
          return "completed";
        }
        await tx.run(SQL.releaseBatch, [...key, waiting.next_run_at ?? now, lastError ?? null]);
        return "pending";
      });
    },

    async getAuthorityBreaker(authority) {
      const row = await db.one<{ state: AuthorityBreaker["state"]; until: string | Date | null }>(SQL.getAuthorityBreaker, [authority]);
      return row ? { state: row.state, until: isoOrNull(row.until) } : { state: "closed", until: null };
    },

    async openAuthorityBreaker(authority, { until, now }) {
      await db.run(SQL.openAuthorityBreaker, [authority, until, now]);
    },

    async claimAuthorityBreakerProbe(authority, { owner, until, now }) {
      return (await db.run(SQL.claimAuthorityBreakerProbe, [authority, owner, until, now])) === 1;
    },

    async closeAuthorityBreaker(authority, now) {
      await db.run(SQL.closeAuthorityBreaker, [authority, now]);
    },
  };
}

/** As the statement picked them: deadline (none last), then id. */
function earliestDeadlineFirst(a: DueItem, b: DueItem): number {
  if (a.deadlineAt !== b.deadlineAt) {
    if (a.deadlineAt === null) return 1;
    if (b.deadlineAt === null) return -1;
    return a.deadlineAt < b.deadlineAt ? -1 : 1;
  }
  return a.workItemId - b.workItemId;
}

/** The fence: true only while `batch.leaseOwner` still holds the batch. */
async function renewLease(tx: Queryable, batch: ClaimedBatch, leaseExpiresAt: string): Promise<boolean> {
  return (await tx.run(SQL.renewBatchLease, [batch.companyId, batch.workBatchId, batch.leaseOwner, leaseExpiresAt])) === 1;
}
