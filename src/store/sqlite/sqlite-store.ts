/**
 * The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a resolved write
 * is on disk. Adds that arrive together are coalesced into one transaction (group commit) on a
 * writer thread (intake-writer.ts): one fsync serves many requests, the event loop keeps
 * serving while it happens, and each request's promise resolves only after that commit.
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
import { IntakeWriter } from "./intake-writer.ts";
import { createListWorkItems } from "./list-statements.ts";
import { applyConnectionPragmas } from "./pragmas.ts";
import { prepareStatements, type Statements } from "./statements.ts";

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly flags = { singleWriter: true, supportsSkipLocked: false };
  readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly lifecycle: SqliteLifecycle;
  /** Group commit of adds on the writer thread; `intake.stats` holds the group sizes. */
  readonly intake: IntakeWriter;
  private readonly listWorkItemRows: ReturnType<typeof createListWorkItems>;

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = guardConnection(new Database(path));
    applyConnectionPragmas(this.db);
    migrate(this.db);
    this.sql = prepareStatements(this.db);
    this.lifecycle = new SqliteLifecycle(this.db, this.sql);
    this.intake = new IntakeWriter(path);
    this.listWorkItemRows = createListWorkItems(this.db);
  }

  async ping(): Promise<void> {
    try {
      this.sql.ping.get();
    } catch (error) {
      throw new StoreUnavailableError("SQLite does not answer", { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.intake.close();
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
    return this.intake.add(input);
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
    return this.listWorkItemRows(companyId, query).map(toWorkItemView);
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
