/**
 * The shared store's part of the lifecycle after intake (SPEC §5, §6): cancelling, the bot's
 * batch leases and item outcomes, and the webhook outbox. The twin of sqlite/lifecycle.ts with
 * the same semantics; PostgresStore delegates to it. Every multi-statement operation is one
 * READ COMMITTED transaction, so an outcome and its outbox row commit together, and the lease
 * renewal that opens it (an UPDATE of the batch row) holds the batch until the commit.
 *
 * Across processes, row locks do what SQLite's single writer does: claims use
 * FOR UPDATE SKIP LOCKED, cancel holds its batch FOR SHARE, and finishBatch holds it FOR UPDATE.
 */
import { randomUUID } from "node:crypto";
import type { WorkBatchStatus } from "../../domain/views.ts";
import { iso, toWorkItemView, type WorkItemRow } from "../rows.ts";
import type {
  CancelOutcome,
  ClaimedBatch,
  DueItem,
  FinishBatchOutcome,
  ItemOutcome,
  WebhookAttemptOutcome,
  WebhookDelivery,
  WebhookEventType,
} from "../store.ts";
import type { Database, Query } from "./database.ts";
import { SQL } from "./statements.ts";

interface ClaimedBatchRow {
  company_id: string;
  work_batch_id: string;
  work_type: string;
  lease_owner: string;
  lease_expires_at: Date;
}

interface DueItemRow {
  company_id: string;
  work_batch_id: string;
  work_item_id: string;
  work_type: string;
  request: Record<string, unknown>;
  attempts: number;
}

interface OutboxRow {
  company_id: string;
  event_id: string;
  work_item_id: string;
  event_type: WebhookEventType;
  url: string;
  attempts: number;
  created_at: Date;
}

const EVENT_TYPE: Partial<Record<ItemOutcome["kind"], WebhookEventType>> = { succeeded: "workitem.succeeded", failed: "workitem.failed" };

export class PostgresLifecycle {
  private readonly query: Query;

  constructor(private readonly db: Database) {
    this.query = db.query;
  }

  cancelWorkItem(companyId: number, workItemId: number, now: string): Promise<CancelOutcome> {
    return this.db.withTransaction(async (query) => {
      // The batch row is held FOR SHARE until commit: the bot's close (an UPDATE) waits for
      // this cancel, and this cancel sees the batch as the close left it, never half-way.
      const { rows: batches } = await query<{ status: WorkBatchStatus }>(SQL.lockItemBatch, [companyId, workItemId]);
      if (batches.length === 0) return { kind: "notFound" };
      if (batches[0]!.status === "Open") {
        const { rows } = await query<WorkItemRow>(SQL.cancelWorkItem, [companyId, workItemId, now]);
        if (rows[0]) return { kind: "cancelled", item: toWorkItemView(rows[0]) };
      }
      const { rows } = await query<WorkItemRow & { batch_status: WorkBatchStatus }>(SQL.getWorkItemWithBatchStatus, [companyId, workItemId]);
      const current = rows[0];
      if (!current) return { kind: "notFound" };
      return { kind: "conflict", item: toWorkItemView(current), batchStatus: current.batch_status };
    });
  }

  async closeOpenBatches(now: string): Promise<number> {
    return (await this.query(SQL.closeOpenBatches, [now])).rowCount ?? 0;
  }

  async claimBatch(input: { owner: string; dueBefore: string; leaseExpiresAt: string }): Promise<ClaimedBatch | undefined> {
    const { rows } = await this.query<ClaimedBatchRow>(SQL.claimBatch, [input.owner, input.dueBefore, input.leaseExpiresAt]);
    const row = rows[0];
    return (
      row && {
        companyId: Number(row.company_id),
        workBatchId: Number(row.work_batch_id),
        workType: row.work_type,
        leaseOwner: row.lease_owner,
        leaseExpiresAt: iso(row.lease_expires_at),
      }
    );
  }

  takeDueItems(batch: ClaimedBatch, input: { now: string; dueBefore: string; limit: number; leaseExpiresAt: string }): Promise<DueItem[] | undefined> {
    return this.db.withTransaction(async (query) => {
      if (!(await renewLease(query, batch, input.leaseExpiresAt))) return undefined;
      const { rows } = await query<DueItemRow>(SQL.markItemsInProgress, [batch.companyId, batch.workBatchId, input.now, input.dueBefore, input.limit]);
      return rows
        .map((row) => ({
          companyId: Number(row.company_id),
          workBatchId: Number(row.work_batch_id),
          workItemId: Number(row.work_item_id),
          workType: row.work_type,
          request: row.request,
          attempts: row.attempts,
        }))
        .sort((a, b) => a.workItemId - b.workItemId);
    });
  }

  recordItemOutcome(batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome, input: { now: string; leaseExpiresAt: string }): Promise<boolean> {
    return this.db.withTransaction(async (query) => {
      if (!(await renewLease(query, batch, input.leaseExpiresAt))) return false;
      const { now } = input;
      const key = [batch.companyId, batch.workBatchId, workItemId];
      let rows: Array<{ webhook_url: string | null }>;
      switch (outcome.kind) {
        case "succeeded":
          ({ rows } = await query(SQL.itemSucceeded, [...key, JSON.stringify(outcome.result), now]));
          break;
        case "failed":
          ({ rows } = await query(SQL.itemFailed, [...key, JSON.stringify(outcome.error), outcome.transient ? 1 : 0, outcome.lastError ?? null, now]));
          break;
        case "retry":
          ({ rows } = await query(SQL.itemRetry, [...key, outcome.nextAttemptAt, outcome.lastError, now]));
          break;
      }
      const row = rows[0];
      if (!row) return false;
      const eventType = EVENT_TYPE[outcome.kind];
      if (eventType && row.webhook_url) {
        const eventId = `msg_${randomUUID().replace(/-/g, "")}`;
        await query(SQL.insertOutboxRow, [batch.companyId, eventId, workItemId, eventType, row.webhook_url, now]);
      }
      return true;
    });
  }

  finishBatch(batch: ClaimedBatch, input: { now: string; lastError?: string }): Promise<FinishBatchOutcome> {
    return this.db.withTransaction(async (query): Promise<FinishBatchOutcome> => {
      const { rows: holders } = await query<{ status: string; lease_owner: string | null }>(SQL.lockBatchLease, [batch.companyId, batch.workBatchId]);
      const holder = holders[0];
      if (holder?.status !== "Processing" || holder.lease_owner !== batch.leaseOwner) return "leaseLost";
      const key = [batch.companyId, batch.workBatchId, batch.leaseOwner];
      const { rows } = await query<{ waiting: number; next_run_at: Date | null }>(SQL.waitingItems, [batch.companyId, batch.workBatchId, input.now]);
      const waiting = rows[0]!;
      if (waiting.waiting === 0) {
        await query(SQL.completeBatch, [...key, input.now]);
        return "completed";
      }
      await query(SQL.releaseBatch, [...key, waiting.next_run_at ?? input.now, input.lastError ?? null]);
      return "pending";
    });
  }

  async ensureWebhookSecret(companyId: number, candidate: string): Promise<string | undefined> {
    const { rows } = await this.query<{ webhook_secret: string }>(SQL.ensureWebhookSecret, [companyId, candidate]);
    return rows[0]?.webhook_secret;
  }

  async claimWebhookDeliveries(input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]> {
    const { rows } = await this.query<OutboxRow>(SQL.claimWebhookDeliveries, [input.owner, input.now, input.leaseExpiresAt, input.limit]);
    return rows.map((row) => ({
      companyId: Number(row.company_id),
      eventId: row.event_id,
      workItemId: Number(row.work_item_id),
      eventType: row.event_type,
      url: row.url,
      attempts: row.attempts,
      createdAt: iso(row.created_at),
    }));
  }

  async recordWebhookAttempt(delivery: WebhookDelivery, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    const status = outcome.kind === "delivered" ? "Delivered" : outcome.kind === "retry" ? "Pending" : "Failed";
    const { rowCount } = await this.query(SQL.recordWebhookAttempt, [
      delivery.companyId,
      delivery.eventId,
      owner,
      status,
      outcome.kind === "retry" ? outcome.nextAttemptAt : null,
      outcome.httpStatus,
      outcome.kind === "delivered" ? null : outcome.error,
      outcome.kind === "delivered" ? now : null,
    ]);
    return rowCount === 1;
  }

  async countPendingWebhookDeliveries(): Promise<number> {
    const { rows } = await this.query<{ pending: number }>(SQL.countPendingWebhookDeliveries);
    return rows[0]?.pending ?? 0;
  }
}

/** The fence: true only while `batch.leaseOwner` still holds the batch; the row stays locked until commit. */
async function renewLease(query: Query, batch: ClaimedBatch, leaseExpiresAt: string): Promise<boolean> {
  const { rowCount } = await query(SQL.renewBatchLease, [batch.companyId, batch.workBatchId, batch.leaseOwner, leaseExpiresAt]);
  return rowCount === 1;
}
