/**
 * The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a resolved write
 * is on disk. Adds that arrive together are coalesced into one transaction (group commit): one
 * fsync serves many requests, and each request's promise resolves only after that commit.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { StoreUnavailableError } from "../../errors.ts";
import { readMigrations } from "../migrations.ts";
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
import { SqliteLifecycle } from "./lifecycle.ts";
import type { WorkBatchView, WorkItemView } from "../../domain/views.ts";
import { guardConnection } from "./driver-errors.ts";
import { prepareStatements, type Statements } from "./statements.ts";

interface PendingAdd {
  input: NewWorkItem;
  resolve: (outcome: AddWorkItemOutcome) => void;
  reject: (error: unknown) => void;
}

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly flags = { singleWriter: true, supportsSkipLocked: false };
  readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly lifecycle: SqliteLifecycle;
  private pendingAdds: PendingAdd[] = [];
  private flushScheduled = false;
  private readonly addOne: (input: NewWorkItem, now: string) => AddWorkItemOutcome;
  private readonly addMany: Database.Transaction<(jobs: PendingAdd[]) => Array<{ outcome?: AddWorkItemOutcome; error?: unknown }>>;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = guardConnection(new Database(path));
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("foreign_keys = ON");
    migrate(this.db);
    this.sql = prepareStatements(this.db);
    this.lifecycle = new SqliteLifecycle(this.db, this.sql);
    // Nested better-sqlite3 transactions become savepoints: one item's failure rolls back only
    // that item, while the outer transaction commits the rest with one fsync.
    this.addOne = this.db.transaction((input: NewWorkItem, now: string) => this.insertWorkItem(input, now));
    this.addMany = this.db.transaction((jobs: PendingAdd[]) => {
      const now = new Date().toISOString();
      return jobs.map((job) => {
        try {
          return { outcome: this.addOne(job.input, now) };
        } catch (error) {
          return { error };
        }
      });
    });
  }

  async ping(): Promise<void> {
    try {
      this.sql.ping.get();
    } catch (error) {
      throw new StoreUnavailableError("SQLite does not answer", { cause: error });
    }
  }

  async close(): Promise<void> {
    if (this.pendingAdds.length > 0) this.flushAdds();
    if (this.db.open) this.db.close();
  }

  async createCompany(input: { companyId?: number; name: string }): Promise<Company> {
    const now = new Date().toISOString();
    try {
      const row = this.sql.insertCompany.get({ company_id: input.companyId ?? null, name: input.name, created_at: now }) as Parameters<typeof toCompany>[0];
      return toCompany(row);
    } catch (error) {
      if (isConstraint(error, "PRIMARYKEY") || isConstraint(error, "UNIQUE")) {
        throw new AlreadyExistsError(`company ${input.companyId} already exists`);
      }
      throw error;
    }
  }

  async getCompany(companyId: number): Promise<Company | undefined> {
    const row = this.sql.getCompany.get(companyId) as Parameters<typeof toCompany>[0] | undefined;
    return row && toCompany(row);
  }

  async createApiKey(input: { companyId: number; keyId: string; name: string | null; secretHash: string }): Promise<ApiKeyRecord> {
    const row = this.sql.insertApiKey.get({
      company_id: input.companyId,
      key_id: input.keyId,
      name: input.name,
      secret_hash: input.secretHash,
      created_at: new Date().toISOString(),
    }) as ApiKeyRow;
    return toApiKey(row);
  }

  async findApiKey(companyId: number, keyId: string): Promise<ApiKeyWithHash | undefined> {
    const row = this.sql.findApiKey.get(companyId, keyId) as (ApiKeyRow & { secret_hash: string }) | undefined;
    return row && { ...toApiKey(row), secretHash: row.secret_hash };
  }

  async listApiKeys(companyId: number): Promise<ApiKeyRecord[]> {
    return (this.sql.listApiKeys.all(companyId) as ApiKeyRow[]).map(toApiKey);
  }

  async revokeApiKey(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = this.sql.revokeApiKey.get(new Date().toISOString(), keyId) as ApiKeyRow | undefined;
    return row && toApiKey(row);
  }

  async getWebhookSecret(companyId: number): Promise<string | undefined> {
    const row = this.sql.getWebhookSecret.get(companyId) as { webhook_secret: string | null } | undefined;
    return row?.webhook_secret ?? undefined;
  }

  async setWebhookSecret(companyId: number, secret: string): Promise<void> {
    this.sql.setWebhookSecret.run(secret, companyId);
  }

  /** Kept as a file beside the database (mode 0600), so tokens survive a restart. */
  async getOrCreateSigningSecret(candidate: string): Promise<string> {
    const file = join(dirname(this.path), "jwt-secret");
    try {
      return readFileSync(file, "utf8").trim();
    } catch {
      try {
        writeFileSync(file, `${candidate}\n`, { mode: 0o600, flag: "wx" });
        return candidate;
      } catch {
        return readFileSync(file, "utf8").trim();
      }
    }
  }

  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome> {
    return new Promise((resolve, reject) => {
      this.pendingAdds.push({ input, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flushAdds());
      }
    });
  }

  private flushAdds(): void {
    const jobs = this.pendingAdds;
    this.pendingAdds = [];
    this.flushScheduled = false;
    if (jobs.length === 0) return;
    let results: Array<{ outcome?: AddWorkItemOutcome; error?: unknown }>;
    try {
      // IMMEDIATE: with a worker process writing the same file, a deferred transaction that
      // reads first could not upgrade to a write and would fail instead of waiting.
      results = this.addMany.immediate(jobs);
    } catch (error) {
      // The commit itself failed: nothing of this group is stored, so nobody may see a 200.
      const unavailable = new StoreUnavailableError("SQLite commit failed", { cause: error });
      for (const job of jobs) job.reject(unavailable);
      return;
    }
    results.forEach((result, index) => {
      const job = jobs[index]!;
      if (result.outcome) job.resolve(result.outcome);
      else job.reject(result.error);
    });
  }

  private insertWorkItem(input: NewWorkItem, now: string): AddWorkItemOutcome {
    const { companyId, idempotency } = input;
    if (idempotency) {
      const previous = this.sql.findIdempotencyKey.get(companyId, idempotency.key) as
        | { request_hash: string; work_batch_id: number; work_item_id: number; created_at: string }
        | undefined;
      if (previous) {
        const expired = Date.parse(previous.created_at) + idempotency.retentionSeconds * 1000 <= Date.parse(now);
        if (!expired) {
          if (previous.request_hash !== idempotency.requestHash) return { kind: "keyReused" };
          return { kind: "replayed", key: { workBatchId: previous.work_batch_id, workItemId: previous.work_item_id } };
        }
        this.sql.deleteIdempotencyKey.run(companyId, idempotency.key);
      }
    }
    let batch = this.sql.findOpenBatch.get(companyId, input.workType) as { work_batch_id: number; item_count: number } | undefined;
    if (batch && batch.item_count >= input.batchMaxItems) {
      this.sql.closeBatch.run(now, companyId, batch.work_batch_id);
      batch = undefined;
    }
    if (!batch) {
      batch = this.sql.insertOpenBatch.get(companyId, input.workType, now) as { work_batch_id: number; item_count: number };
    }
    const item = this.sql.insertWorkItem.get({
      company_id: companyId,
      work_batch_id: batch.work_batch_id,
      work_type: input.workType,
      customer_reference: input.customerReference,
      document_reference: input.documentReference,
      webhook_url: input.webhookUrl,
      request: JSON.stringify(input.request),
      now,
    }) as { work_item_id: number };
    this.sql.countBatchItem.run(companyId, batch.work_batch_id);
    const key = { workBatchId: batch.work_batch_id, workItemId: item.work_item_id };
    if (idempotency) {
      this.sql.insertIdempotencyKey.run(companyId, idempotency.key, idempotency.requestHash, key.workBatchId, key.workItemId, now);
    }
    return { kind: "created", key };
  }

  async getWorkItem(companyId: number, workItemId: number): Promise<WorkItemView | undefined> {
    const row = this.sql.getWorkItem.get(companyId, workItemId) as WorkItemRow | undefined;
    return row && toWorkItemView(row);
  }

  async getWorkBatch(companyId: number, workBatchId: number): Promise<WorkBatchView | undefined> {
    const row = this.sql.getWorkBatch.get(companyId, workBatchId) as WorkBatchRow | undefined;
    if (!row) return undefined;
    const counts = this.sql.countBatchItemsByStatus.all(companyId, workBatchId) as Array<{ status: string; count: number }>;
    return toWorkBatchView(row, counts);
  }

  async listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]> {
    const rows = this.sql.listWorkItems.all({
      company_id: companyId,
      status: query.status ?? null,
      customer_reference: query.customerReference ?? null,
      work_batch_id: query.workBatchId ?? null,
      before_id: query.beforeWorkItemId ?? null,
      limit: query.limit,
    }) as WorkItemRow[];
    return rows.map(toWorkItemView);
  }

  async cancelWorkItem(companyId: number, workItemId: number, now: string): Promise<CancelOutcome> {
    return this.lifecycle.cancelWorkItem(companyId, workItemId, now);
  }

  async closeOpenBatches(now: string): Promise<number> {
    return this.lifecycle.closeOpenBatches(now);
  }

  async claimBatch(input: { owner: string; dueBefore: string; leaseExpiresAt: string }): Promise<ClaimedBatch | undefined> {
    return this.lifecycle.claimBatch(input);
  }

  async takeDueItems(batch: ClaimedBatch, input: { now: string; dueBefore: string; limit: number; leaseExpiresAt: string }): Promise<DueItem[] | undefined> {
    return this.lifecycle.takeDueItems(batch, input);
  }

  async recordItemOutcome(batch: ClaimedBatch, workItemId: number, outcome: ItemOutcome, input: { now: string; leaseExpiresAt: string }): Promise<boolean> {
    return this.lifecycle.recordItemOutcome(batch, workItemId, outcome, input);
  }

  async finishBatch(batch: ClaimedBatch, input: { now: string; lastError?: string }): Promise<FinishBatchOutcome> {
    return this.lifecycle.finishBatch(batch, input);
  }

  async ensureWebhookSecret(companyId: number, candidate: string): Promise<string | undefined> {
    return this.lifecycle.ensureWebhookSecret(companyId, candidate);
  }

  async claimWebhookDeliveries(input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]> {
    return this.lifecycle.claimWebhookDeliveries(input);
  }

  async recordWebhookAttempt(delivery: WebhookDelivery, owner: string, outcome: WebhookAttemptOutcome, now: string): Promise<boolean> {
    return this.lifecycle.recordWebhookAttempt(delivery, owner, outcome, now);
  }

  async countPendingWebhookDeliveries(): Promise<number> {
    return this.lifecycle.countPendingWebhookDeliveries();
  }

  async countRows(): Promise<RowCounts> {
    const row = this.sql.countRows.get() as Record<string, number>;
    return {
      companies: row.companies ?? 0,
      apiKeys: row.api_keys ?? 0,
      workBatches: row.work_batches ?? 0,
      workItems: row.work_items ?? 0,
      idempotencyKeys: row.idempotency_keys ?? 0,
    };
  }
}

function migrate(db: Database.Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  for (const migration of readMigrations(new URL("./migrations/", import.meta.url))) {
    // IMMEDIATE takes the write lock first, so two processes starting at once apply it once.
    const apply = db.transaction(() => {
      if (db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(migration.version)) return;
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        migration.version,
        migration.name,
        new Date().toISOString(),
      );
    });
    apply.immediate();
  }
}

const isConstraint = (error: unknown, kind: string) => (error as { code?: unknown } | null)?.code === `SQLITE_CONSTRAINT_${kind}`;
