/**
 * The shared store: PostgreSQL through a `pg` pool, for any number of `api` and `worker`
 * processes on one database. Correctness across processes comes from the database itself: the
 * partial unique index keeps one Open batch per company and work type, the Open batch row is
 * locked while an item is appended, and the idempotency primary key decides a raced key.
 *
 * Appends use group commit (appends.ts): concurrent calls share one transaction with a
 * savepoint per item, so many requests cost one WAL flush and one round trip, and each promise
 * resolves only after its group committed.
 *
 * The lifecycle after intake (cancel, the bot's leases, the webhook outbox) lives in
 * lifecycle.ts. Adding a method: put its SQL in statements.ts, then call `this.query` (one
 * statement) or `this.withTransaction` (several, atomically).
 */
import { StoreUnavailableError } from "../../errors.ts";
import type { WorkBatchView, WorkItemView } from "../../domain/views.ts";
import { toApiKey, toCompany, toWorkBatchView, toWorkItemView, type ApiKeyRow, type WorkBatchRow, type WorkItemRow } from "../rows.ts";
import {
  AlreadyExistsError,
  type AddWorkItemOutcome,
  type ApiKeyRecord,
  type ApiKeyWithHash,
  type CancelOutcome,
  type ClaimedBatch,
  type Company,
  type DueItem,
  type FinishBatchOutcome,
  type ItemOutcome,
  type ListWorkItemsQuery,
  type NewWorkItem,
  type RowCounts,
  type Store,
  type WebhookAttemptOutcome,
  type WebhookDelivery,
} from "../store.ts";
import { createAppender } from "./appends.ts";
import { Database, type Query } from "./database.ts";
import type { GroupCommitter } from "./group-commit.ts";
import { PostgresLifecycle } from "./lifecycle.ts";
import { SQL, listWorkItemsStatement } from "./statements.ts";

export interface PostgresStoreOptions {
  /** Connections this process may open (default 10). */
  poolSize?: number;
  /** Groups of appends in flight at once, each on its own connection (default 4). */
  addLanes?: number;
}

const SIGNING_SECRET_NAME = "jwt-hs256";

export class PostgresStore implements Store {
  readonly kind = "postgres" as const;
  readonly flags = { singleWriter: false, supportsSkipLocked: true };
  private readonly adds: GroupCommitter<NewWorkItem, AddWorkItemOutcome>;
  private readonly query: Query;
  private readonly lifecycle: PostgresLifecycle;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly db: Database,
    options: PostgresStoreOptions,
  ) {
    this.query = db.query;
    this.adds = createAppender(db, options.addLanes ?? 4);
    this.lifecycle = new PostgresLifecycle(db);
  }

  /** Connects, applies pending migrations, and returns the store. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    return new PostgresStore(await Database.open(url, options.poolSize ?? 10), options);
  }

  /** Several statements in one transaction; see Database.withTransaction. */
  withTransaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    return this.db.withTransaction(work);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.adds.drain();
      await this.db.end();
    })();
    return this.closing;
  }

  async createCompany(input: { companyId?: number; name: string }): Promise<Company> {
    // Without an id, the next free one; a concurrent create may take it first, so try again.
    for (let attempt = 0; ; attempt++) {
      try {
        const { rows } =
          input.companyId === undefined
            ? await this.query<Parameters<typeof toCompany>[0]>(SQL.insertCompanyNextId, [input.name])
            : await this.query<Parameters<typeof toCompany>[0]>(SQL.insertCompany, [input.companyId, input.name]);
        return toCompany(rows[0]!);
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (input.companyId !== undefined || attempt >= 4) throw new AlreadyExistsError(`company ${input.companyId ?? "(next id)"} already exists`);
      }
    }
  }

  async getCompany(companyId: number): Promise<Company | undefined> {
    const { rows } = await this.query<Parameters<typeof toCompany>[0]>(SQL.getCompany, [companyId]);
    return rows[0] && toCompany(rows[0]);
  }

  async createApiKey(input: { companyId: number; keyId: string; name: string | null; secretHash: string }): Promise<ApiKeyRecord> {
    const { rows } = await this.query<ApiKeyRow>(SQL.insertApiKey, [input.companyId, input.keyId, input.name, input.secretHash]);
    return toApiKey(rows[0]!);
  }

  async findApiKey(companyId: number, keyId: string): Promise<ApiKeyWithHash | undefined> {
    const { rows } = await this.query<ApiKeyRow & { secret_hash: string }>(SQL.findApiKey, [companyId, keyId]);
    const row = rows[0];
    return row && { ...toApiKey(row), secretHash: row.secret_hash };
  }

  async listApiKeys(companyId: number): Promise<ApiKeyRecord[]> {
    return (await this.query<ApiKeyRow>(SQL.listApiKeys, [companyId])).rows.map(toApiKey);
  }

  async revokeApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.query<ApiKeyRow>(SQL.revokeApiKey, [keyId]);
    return rows[0] && toApiKey(rows[0]);
  }

  async getWebhookSecret(companyId: number): Promise<string | undefined> {
    const { rows } = await this.query<{ webhook_secret: string | null }>(SQL.getWebhookSecret, [companyId]);
    return rows[0]?.webhook_secret ?? undefined;
  }

  async setWebhookSecret(companyId: number, secret: string): Promise<void> {
    await this.query(SQL.setWebhookSecret, [companyId, secret]);
  }

  /** Kept in the database, so every process sharing it signs and verifies with the same key. */
  async getOrCreateSigningSecret(candidate: string): Promise<string> {
    await this.query(SQL.insertSigningSecret, [SIGNING_SECRET_NAME, candidate]);
    const { rows } = await this.query<{ secret: string }>(SQL.getSigningSecret, [SIGNING_SECRET_NAME]);
    return rows[0]!.secret;
  }

  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome> {
    if (this.closing) return Promise.reject(new StoreUnavailableError("the store is closing"));
    return this.adds.submit(input);
  }

  async getWorkItem(companyId: number, workItemId: number): Promise<WorkItemView | undefined> {
    const { rows } = await this.query<WorkItemRow>(SQL.getWorkItem, [companyId, workItemId]);
    return rows[0] && toWorkItemView(rows[0]);
  }

  async getWorkBatch(companyId: number, workBatchId: number): Promise<WorkBatchView | undefined> {
    const { rows } = await this.query<WorkBatchRow & { status_counts: Array<{ status: string; count: number }> }>(SQL.getWorkBatch, [
      companyId,
      workBatchId,
    ]);
    return rows[0] && toWorkBatchView(rows[0], rows[0].status_counts);
  }

  async listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]> {
    const statement = listWorkItemsStatement({
      status: query.status !== undefined,
      customerReference: query.customerReference !== undefined,
      workBatchId: query.workBatchId !== undefined,
      beforeWorkItemId: query.beforeWorkItemId !== undefined,
    });
    const values = [companyId, query.limit, query.status, query.customerReference, query.workBatchId, query.beforeWorkItemId].filter(
      (value, index) => index < 2 || value !== undefined,
    );
    return (await this.query<WorkItemRow>(statement, values)).rows.map(toWorkItemView);
  }

  cancelWorkItem(companyId: number, workItemId: number, now: string): Promise<CancelOutcome> {
    return this.lifecycle.cancelWorkItem(companyId, workItemId, now);
  }

  closeOpenBatches(now: string): Promise<number> {
    return this.lifecycle.closeOpenBatches(now);
  }

  claimBatch(input: { owner: string; dueBefore: string; leaseExpiresAt: string }): Promise<ClaimedBatch | undefined> {
    return this.lifecycle.claimBatch(input);
  }

  takeDueItems(batch: ClaimedBatch, input: { now: string; dueBefore: string; limit: number; leaseExpiresAt: string }): Promise<DueItem[] | undefined> {
    return this.lifecycle.takeDueItems(batch, input);
  }

  recordItemOutcome(batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome, input: { now: string; leaseExpiresAt: string }): Promise<boolean> {
    return this.lifecycle.recordItemOutcome(batch, workItemId, outcome, input);
  }

  finishBatch(batch: ClaimedBatch, input: { now: string; lastError?: string }): Promise<FinishBatchOutcome> {
    return this.lifecycle.finishBatch(batch, input);
  }

  ensureWebhookSecret(companyId: number, candidate: string): Promise<string | undefined> {
    return this.lifecycle.ensureWebhookSecret(companyId, candidate);
  }

  claimWebhookDeliveries(input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]> {
    return this.lifecycle.claimWebhookDeliveries(input);
  }

  recordWebhookAttempt(delivery: WebhookDelivery, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    return this.lifecycle.recordWebhookAttempt(delivery, owner, outcome, now);
  }

  countPendingWebhookDeliveries(): Promise<number> {
    return this.lifecycle.countPendingWebhookDeliveries();
  }

  async countRows(): Promise<RowCounts> {
    const { rows } = await this.query<Record<string, number>>(SQL.countRows);
    const row = rows[0] ?? {};
    return {
      companies: row.companies ?? 0,
      apiKeys: row.api_keys ?? 0,
      workBatches: row.work_batches ?? 0,
      workItems: row.work_items ?? 0,
      idempotencyKeys: row.idempotency_keys ?? 0,
    };
  }
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "23505";
