/**
 * The shared store: PostgreSQL through a `pg` pool, for any number of `api` and `worker`
 * processes on one database. Correctness across processes comes from the database itself: the
 * partial unique index keeps one Open batch per company and work type, the Open batch row is
 * locked while an item is appended, and the idempotency primary key decides a raced key.
 *
 * Appends use group commit (see group-commit.ts and `wia_add_work_items` in the migration):
 * concurrent calls share one transaction with a savepoint per item, so many requests cost one
 * WAL flush and one round trip, and each promise resolves only after its group committed.
 */
import pg from "pg";
import { StoreUnavailableError } from "../../errors.ts";
import type { WorkBatchView, WorkItemView } from "../../domain/views.ts";
import { toApiKey, toCompany, toWorkBatchView, toWorkItemView, type ApiKeyRow, type WorkBatchRow, type WorkItemRow } from "../rows.ts";
import {
  AlreadyExistsError,
  type AddWorkItemOutcome,
  type ApiKeyRecord,
  type ApiKeyWithHash,
  type Company,
  type ListWorkItemsQuery,
  type NewWorkItem,
  type RowCounts,
  type Store,
} from "../store.ts";
import { isRetryableSqlState, isUnavailable, storeError } from "./errors.ts";
import { GroupCommitter, type GroupResult } from "./group-commit.ts";
import { migrate } from "./migrate.ts";
import { SQL, listWorkItemsStatement, type Statement } from "./statements.ts";

export interface PostgresStoreOptions {
  /** Connections this process may open (default 10). */
  poolSize?: number;
  /** Groups of appends in flight at once, each on its own connection (default 4). */
  addLanes?: number;
}

/** Runs one named statement; the only way code in this folder talks to PostgreSQL. */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(statement: Statement, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/**
 * Items per group. Each item is a subtransaction; PostgreSQL keeps at most 64 of them per
 * transaction in shared memory, beyond which every other session's snapshots get slower.
 */
const MAX_GROUP_SIZE = 64;
const SIGNING_SECRET_NAME = "jwt-hs256";

interface AddRow {
  /** Index into the sorted group. */
  item_ord: number;
  outcome: "created" | "replayed" | "keyReused" | "failed";
  batch_id: string | null;
  item_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

export class PostgresStore implements Store {
  readonly kind = "postgres" as const;
  readonly flags = { singleWriter: false, supportsSkipLocked: true };
  private readonly adds: GroupCommitter<NewWorkItem, AddWorkItemOutcome>;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly pool: pg.Pool,
    options: PostgresStoreOptions,
  ) {
    this.adds = new GroupCommitter({
      lanes: options.addLanes ?? 4,
      maxGroupSize: MAX_GROUP_SIZE,
      laneKey: (input) => input.companyId,
      runGroup: (inputs) => this.addGroup(inputs),
    });
  }

  /** Connects, applies pending migrations, and returns the store. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: "work-item-api",
    });
    // An idle connection that dies (a database restart) is dropped by the pool; the next
    // query opens a new one. Without a listener the process would crash.
    pool.on("error", () => undefined);
    // The append logic relies on READ COMMITTED re-checks (see the migration), whatever the
    // server's default; pg runs this before any other query on the new connection.
    pool.on("connect", (client) => void client.query("SET default_transaction_isolation = 'read committed'").catch(() => undefined));
    try {
      await migrate(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PostgresStore(pool, options);
  }

  private readonly query: Query = async (statement, values = []) => {
    try {
      return await this.pool.query({ name: statement.name, text: statement.text, values });
    } catch (error) {
      throw storeError(error);
    }
  };

  /**
   * Runs `work` in one READ COMMITTED transaction on one connection. A failed COMMIT means
   * nothing of it is stored, so callers must not report success: it becomes StoreUnavailableError.
   */
  async withTransaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error);
    }
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on("error", onError);
    const query: Query = (statement, values = []) => client.query({ name: statement.name, text: statement.text, values });
    try {
      await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
      const result = await work(query);
      try {
        await client.query("COMMIT");
      } catch (error) {
        broken ??= error as Error;
        throw new StoreUnavailableError("PostgreSQL commit failed", { cause: error });
      }
      return result;
    } catch (error) {
      if (!broken) await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      throw storeError(error);
    } finally {
      client.off("error", onError);
      // A connection that failed is closed rather than handed to the next caller.
      client.release(broken);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.pool.query(SQL.ping.text);
    } catch (error) {
      throw new StoreUnavailableError("PostgreSQL does not answer", { cause: error });
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.adds.drain();
      await this.pool.end();
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

  /**
   * One group: one statement, which PostgreSQL runs as its own transaction (see
   * `wia_add_work_items` in the migration). `pg` settles a query only at ReadyForQuery, which
   * the server sends after the implicit COMMIT has reached the WAL; a failed commit fails the
   * statement, and with it every call of the group. One round trip per group, rather than
   * three for BEGIN/statement/COMMIT, matters when this process's event loop is busy.
   */
  private async addGroup(inputs: NewWorkItem[]): Promise<Array<GroupResult<AddWorkItemOutcome>>> {
    // One lock order for every group (company, then work type), so groups never deadlock.
    const order = inputs
      .map((input, ord) => ({ input, ord }))
      .sort((a, b) => a.input.companyId - b.input.companyId || (a.input.workType < b.input.workType ? -1 : a.input.workType > b.input.workType ? 1 : 0));
    const items = order.map(({ input }) => ({
      company_id: input.companyId,
      work_type: input.workType,
      customer_reference: input.customerReference,
      document_reference: input.documentReference,
      webhook_url: input.webhookUrl,
      batch_max_items: input.batchMaxItems,
      idempotency_key: input.idempotency?.key ?? null,
      request_hash: input.idempotency?.requestHash ?? null,
      retention_seconds: input.idempotency?.retentionSeconds ?? null,
    }));
    const requests = order.map(({ input }) => JSON.stringify(input.request));
    let rows: AddRow[];
    try {
      ({ rows } = await this.pool.query<AddRow>({ ...SQL.addWorkItems, values: [JSON.stringify(items), requests] }));
    } catch (error) {
      // Whether the server committed is unknown when the connection broke after sending: the
      // callers are told "unavailable, retry", and an Idempotency-Key makes that retry safe.
      throw isUnavailable(error) ? new StoreUnavailableError("PostgreSQL did not confirm the commit", { cause: error }) : error;
    }
    const results: Array<GroupResult<AddWorkItemOutcome>> = [];
    for (const row of rows) results[order[row.item_ord]!.ord] = toAddResult(row);
    return results;
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

function toAddResult(row: AddRow): GroupResult<AddWorkItemOutcome> {
  switch (row.outcome) {
    case "created":
    case "replayed":
      return { outcome: { kind: row.outcome, key: { workBatchId: Number(row.batch_id), workItemId: Number(row.item_id) } } };
    case "keyReused":
      return { outcome: { kind: "keyReused" } };
    default: {
      const cause = Object.assign(new Error(row.failure_message ?? "work item not stored"), { code: row.failure_code });
      // A deadlock or lock timeout on this item is worth a retry; anything else is a bug or bad data.
      if (isRetryableSqlState(row.failure_code)) return { error: new StoreUnavailableError("PostgreSQL could not store the item now", { cause }) };
      return { error: new Error(`PostgreSQL refused the work item (SQLSTATE ${row.failure_code})`, { cause }) };
    }
  }
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "23505";
