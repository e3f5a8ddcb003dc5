/**
 * The bot's operations (SPEC §5): close and claim batches company by company, take due items,
 * record each outcome with its webhook outbox row, finish the batch.
 *
 * Every write after a claim is fenced by the batch lease: it renews the lease first, in the
 * same transaction, and changes nothing when another worker holds the batch now. On PostgreSQL
 * that renewal (an UPDATE of the batch row) also holds the batch until commit.
 */
import { randomUUID } from "node:crypto";
import type { DatabasePort, Queryable } from "../port.ts";
import { toClaimedBatch, toDueItem, type ClaimedBatchRow, type DueItemRow } from "../rows.ts";
import type { ClaimedBatch, ItemOutcome, Store, WebhookEventType } from "../store.ts";
import { SQL } from "./sql.ts";

type BotOperations = Pick<Store, "companiesWithBotWork" | "closeOpenBatches" | "claimBatch" | "takeDueItems" | "recordItemOutcome" | "finishBatch">;

const EVENT_TYPE: Partial<Record<ItemOutcome["kind"], WebhookEventType>> = { succeeded: "workitem.succeeded", failed: "workitem.failed" };

/** The webhook id of an event (`msg_` + 32 hex), as Standard Webhooks suggests. */
const newEventId = () => `msg_${randomUUID().replace(/-/g, "")}`;

export function botOperations(db: DatabasePort): BotOperations {
  return {
    async companiesWithBotWork(dueBefore) {
      const rows = await db.all<{ company_id: number | string; open_batch: number | string }>(SQL.companiesWithBotWork, [dueBefore]);
      return rows.map((row) => ({ companyId: Number(row.company_id), openBatch: Number(row.open_batch) === 1 }));
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
        return rows.map(toDueItem).sort((a, b) => a.workItemId - b.workItemId);
      });
    },

    recordItemOutcome(batch, workItemId, outcome, { now, leaseExpiresAt }) {
      return db.transaction(async (tx) => {
        if (!(await renewLease(tx, batch, leaseExpiresAt))) return false;
        const key = [batch.companyId, batch.workBatchId, workItemId];
        let changed: { webhook_url: string | null } | undefined;
        switch (outcome.kind) {
          case "succeeded":
            changed = await tx.one(SQL.itemSucceeded, [...key, JSON.stringify(outcome.result), now]);
            break;
          case "failed":
            changed = await tx.one(SQL.itemFailed, [...key, JSON.stringify(outcome.error), outcome.transient ? 1 : 0, outcome.lastError ?? null, now]);
            break;
          case "retried":
            changed = await tx.one(SQL.itemRetried, [...key, outcome.nextAttemptAt, outcome.lastError, now]);
            break;
        }
        if (!changed) return false;
        const eventType = EVENT_TYPE[outcome.kind];
        if (eventType && changed.webhook_url) {
          await tx.run(SQL.insertOutboxRow, [batch.companyId, newEventId(), workItemId, eventType, changed.webhook_url, now]);
        }
        return true;
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
  };
}

/** The fence: true only while `batch.leaseOwner` still holds the batch. */
async function renewLease(tx: Queryable, batch: ClaimedBatch, leaseExpiresAt: string): Promise<boolean> {
  return (await tx.run(SQL.renewBatchLease, [batch.companyId, batch.workBatchId, batch.leaseOwner, leaseExpiresAt])) === 1;
}
