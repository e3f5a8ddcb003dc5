/**
 * The embedded store's part of the lifecycle after intake (SPEC §5, §6): cancelling, the bot's
 * batch leases and item outcomes, and the webhook outbox. SqliteStore delegates to it; every
 * multi-statement operation is one transaction, so an outcome and its outbox row commit together.
 */
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { WorkBatchStatus } from "../../domain/views.ts";
import { toWorkItemView, type WorkItemRow } from "../rows.ts";
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
import type { Statements } from "./statements.ts";

interface ClaimedBatchRow {
  company_id: number;
  work_batch_id: number;
  work_type: string;
  lease_owner: string;
  lease_expires_at: string;
}

interface DueItemRow {
  company_id: number;
  work_batch_id: number;
  work_item_id: number;
  work_type: string;
  request: string;
  attempts: number;
}

interface OutboxRow {
  company_id: number;
  event_id: string;
  work_item_id: number;
  event_type: WebhookEventType;
  url: string;
  attempts: number;
  created_at: string;
}

const EVENT_TYPE: Partial<Record<ItemOutcome["kind"], WebhookEventType>> = { succeeded: "workitem.succeeded", failed: "workitem.failed" };

export class SqliteLifecycle {
  readonly takeDueItems: (batch: ClaimedBatch, input: { now: string; dueBefore: string; limit: number; leaseExpiresAt: string }) => DueItem[] | undefined;
  readonly recordItemOutcome: (batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome, input: { now: string; leaseExpiresAt: string }) => boolean;
  readonly finishBatch: (batch: ClaimedBatch, input: { now: string; lastError?: string }) => FinishBatchOutcome;

  constructor(
    db: Database.Database,
    private readonly sql: Statements,
  ) {
    // IMMEDIATE: take the write lock up front, so another process's writer makes us wait
    // (busy_timeout) instead of failing when a read would have to upgrade to a write.
    this.takeDueItems = immediate(db, (batch: ClaimedBatch, input: { now: string; dueBefore: string; limit: number; leaseExpiresAt: string }) => {
      if (!this.renewLease(batch, input.leaseExpiresAt)) return undefined;
      const rows = this.sql.markItemsInProgress.all({
        company_id: batch.companyId,
        work_batch_id: batch.workBatchId,
        now: input.now,
        due_before: input.dueBefore,
        limit: input.limit,
      }) as DueItemRow[];
      return rows
        .map((row) => ({
          companyId: row.company_id,
          workBatchId: row.work_batch_id,
          workItemId: row.work_item_id,
          workType: row.work_type,
          request: JSON.parse(row.request) as Record<string, unknown>,
          attempts: row.attempts,
        }))
        .sort((a, b) => a.workItemId - b.workItemId);
    });

    this.recordItemOutcome = immediate(db, (batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome, input: { now: string; leaseExpiresAt: string }) => {
      if (!this.renewLease(batch, input.leaseExpiresAt)) return false;
      const now = input.now;
      const key = { company_id: batch.companyId, work_batch_id: batch.workBatchId, work_item_id: workItemId, now };
      let row: { webhook_url: string | null } | undefined;
      switch (outcome.kind) {
        case "succeeded":
          row = this.sql.itemSucceeded.get({ ...key, result: JSON.stringify(outcome.result) }) as typeof row;
          break;
        case "failed":
          row = this.sql.itemFailed.get({
            ...key,
            error: JSON.stringify(outcome.error),
            attempt: outcome.transient ? 1 : 0,
            last_error: outcome.lastError ?? null,
          }) as typeof row;
          break;
        case "retry":
          row = this.sql.itemRetry.get({ ...key, next_attempt_at: outcome.nextAttemptAt, last_error: outcome.lastError }) as typeof row;
          break;
      }
      if (!row) return false;
      const eventType = EVENT_TYPE[outcome.kind];
      if (eventType && row.webhook_url) {
        this.sql.insertOutboxRow.run({
          company_id: batch.companyId,
          event_id: `msg_${randomUUID().replace(/-/g, "")}`,
          work_item_id: workItemId,
          event_type: eventType,
          url: row.webhook_url,
          now,
        });
      }
      return true;
    });

    this.finishBatch = immediate(db, (batch: ClaimedBatch, input: { now: string; lastError?: string }): FinishBatchOutcome => {
      const holder = this.sql.batchLeaseOwner.get(batch.companyId, batch.workBatchId) as { status: string; lease_owner: string | null } | undefined;
      if (holder?.status !== "Processing" || holder.lease_owner !== batch.leaseOwner) return "leaseLost";
      const key = { company_id: batch.companyId, work_batch_id: batch.workBatchId, owner: batch.leaseOwner, now: input.now };
      const waiting = this.sql.waitingItems.get(key) as { waiting: number; next_run_at: string | null };
      if (waiting.waiting === 0) {
        this.sql.completeBatch.run(key);
        return "completed";
      }
      this.sql.releaseBatch.run({ ...key, next_run_at: waiting.next_run_at ?? input.now, last_error: input.lastError ?? null });
      return "pending";
    });
  }

  cancelWorkItem(companyId: number, workItemId: number, now: string): CancelOutcome {
    const cancelled = this.sql.cancelWorkItem.get({ company_id: companyId, work_item_id: workItemId, now }) as WorkItemRow | undefined;
    if (cancelled) return { kind: "cancelled", item: toWorkItemView(cancelled) };
    const current = this.sql.getWorkItemWithBatchStatus.get(companyId, workItemId) as (WorkItemRow & { batch_status: WorkBatchStatus }) | undefined;
    if (!current) return { kind: "notFound" };
    return { kind: "conflict", item: toWorkItemView(current), batchStatus: current.batch_status };
  }

  closeOpenBatches(now: string): number {
    return this.sql.closeOpenBatches.run(now).changes;
  }

  claimBatch(input: { owner: string; dueBefore: string; leaseExpiresAt: string }): ClaimedBatch | undefined {
    const row = this.sql.claimBatch.get({ owner: input.owner, due_before: input.dueBefore, lease_expires_at: input.leaseExpiresAt }) as
      | ClaimedBatchRow
      | undefined;
    return (
      row && {
        companyId: row.company_id,
        workBatchId: row.work_batch_id,
        workType: row.work_type,
        leaseOwner: row.lease_owner,
        leaseExpiresAt: row.lease_expires_at,
      }
    );
  }

  ensureWebhookSecret(companyId: number, candidate: string): string | undefined {
    const row = this.sql.ensureWebhookSecret.get(candidate, companyId) as { webhook_secret: string } | undefined;
    return row?.webhook_secret;
  }

  claimWebhookDeliveries(input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): WebhookDelivery[] {
    const rows = this.sql.claimWebhookDeliveries.all({
      owner: input.owner,
      now: input.now,
      lease_expires_at: input.leaseExpiresAt,
      limit: input.limit,
    }) as OutboxRow[];
    return rows.map((row) => ({
      companyId: row.company_id,
      eventId: row.event_id,
      workItemId: row.work_item_id,
      eventType: row.event_type,
      url: row.url,
      attempts: row.attempts,
      createdAt: row.created_at,
    }));
  }

  recordWebhookAttempt(delivery: WebhookDelivery, owner: string, outcome: WebhookAttemptOutcome, now: string): boolean {
    const status = outcome.kind === "delivered" ? "Delivered" : outcome.kind === "retry" ? "Pending" : "Failed";
    return (
      this.sql.recordWebhookAttempt.run({
        company_id: delivery.companyId,
        event_id: delivery.eventId,
        owner,
        status,
        next_attempt_at: outcome.kind === "retry" ? outcome.nextAttemptAt : null,
        last_status: outcome.httpStatus,
        last_error: outcome.kind === "delivered" ? null : outcome.error,
        delivered_at: outcome.kind === "delivered" ? now : null,
      }).changes === 1
    );
  }

  countPendingWebhookDeliveries(): number {
    return (this.sql.countPendingWebhookDeliveries.get() as { pending: number }).pending;
  }

  private renewLease(batch: ClaimedBatch, leaseExpiresAt: string): boolean {
    return (
      this.sql.renewBatchLease.run({
        company_id: batch.companyId,
        work_batch_id: batch.workBatchId,
        owner: batch.leaseOwner,
        lease_expires_at: leaseExpiresAt,
      }).changes === 1
    );
  }
}

/** A better-sqlite3 transaction function that always begins IMMEDIATE. */
function immediate<A extends unknown[], R>(db: Database.Database, body: (...args: A) => R): (...args: A) => R {
  const transaction = db.transaction(body);
  return (...args: A) => transaction.immediate(...args);
}
