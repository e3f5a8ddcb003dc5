/**
 * The database port over a `pg` pool. Statements are sent by name, so each connection prepares
 * one once and afterwards sends only its name and values. Connection trouble becomes
 * StoreUnavailableError and a unique-key violation AlreadyExistsError (errors.ts).
 */
import pg from "pg";
import { AlreadyExistsError, StoreUnavailableError } from "../errors.ts";
import { dialectFor, type DatabasePort, type Dialect, type Queryable, type Statement } from "../port.ts";
import type { StoreFlags } from "../store.ts";
import { storeError } from "./errors.ts";
import { SchemaBehindError, type MigrationMode, type SchemaStatus } from "../migrations.ts";
import { migrate, migrationStatus } from "./migrate.ts";
import { followDatabaseIdentity } from "./store-generation.ts";

export const POSTGRES_FLAGS: StoreFlags = { singleWriter: false, supportsSkipLocked: true, reusesIds: false };

export const postgresDialect: Dialect = dialectFor(POSTGRES_FLAGS, {
  byteOrder: ' COLLATE "C"',
  indexedBy: () => "",
  notIndexed: "",
  jsonText: (column, field) => `(${column} ->> '${field}')`,
  epochHour: (column) => `floor(extract(epoch FROM ${column}) / 3600)::bigint`,
  jsonObject: (fields) => `json_build_object(${fields.map(([key, expression]) => `'${key}', ${expression}`).join(", ")})`,
  embeddedJson: (column) => column,
  isoTime: (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
  jsonAsText: (expression) => `${expression}::text`,
  // The column's default is the generation (store-generation.ts moves it), also for the intake
  // functions' inserts and for a previous release's processes.
  storeGeneration: "DEFAULT",
  generationId: "DEFAULT",
  // Identity sequences never give an id twice.
  newId: () => "DEFAULT",
  idList: (parameter) => `SELECT json_array_elements_text(${parameter}::json)::bigint`,
});

const UNIQUE_VIOLATION = "23505";

/** `pg`'s form of a statement: a name it prepares once per connection, and the text. */
const compiled = new Map<string, { name: string; text: string }>();
function named(statement: Statement): { name: string; text: string } {
  let query = compiled.get(statement.name);
  if (!query) {
    query = { name: `wia_${statement.name}`, text: typeof statement.text === "string" ? statement.text : statement.text(postgresDialect) };
    compiled.set(statement.name, query);
  }
  return query;
}

function mapped(error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION) return new AlreadyExistsError("a row with this key already exists", { cause: error });
  return storeError(error);
}

/** Queryable over anything with pg's query(config) (the pool, or one checked-out client). */
function queryable(client: pg.Pool | pg.PoolClient): Queryable {
  const query = async (statement: Statement, values: readonly unknown[] = []) => {
    try {
      return await client.query({ ...named(statement), values: values as unknown[] });
    } catch (error) {
      throw mapped(error);
    }
  };
  return {
    one: async <R>(statement: Statement, values?: readonly unknown[]) => (await query(statement, values)).rows[0] as R | undefined,
    all: async <R>(statement: Statement, values?: readonly unknown[]) => (await query(statement, values)).rows as R[],
    run: async (statement, values) => (await query(statement, values)).rowCount ?? 0,
  };
}

export class PostgresPort implements DatabasePort {
  readonly one: Queryable["one"];
  readonly all: Queryable["all"];
  readonly run: Queryable["run"];

  private constructor(private readonly pool: pg.Pool) {
    ({ one: this.one, all: this.all, run: this.run } = queryable(pool));
  }

  /** Opens a pool of at most `poolSize` connections and, by `mode`, applies pending migrations or refuses to open while any is pending. */
  static async open(url: string, poolSize: number, mode: MigrationMode = "apply"): Promise<PostgresPort> {
    const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: "work-item-api" });
    // An idle connection that dies (a database restart) is dropped by the pool; the next
    // query opens a new one. Without a listener the process would crash.
    pool.on("error", () => undefined);
    try {
      if (mode === "apply") await migrate(pool);
      if (mode === "require") {
        const { pending, repeatables = [], missingKinds = [] } = await migrationStatus(pool);
        const pendingRepeatables = repeatables.filter((repeatable) => repeatable.state === "pending");
        if (pending.length > 0 || pendingRepeatables.length > 0 || missingKinds.length > 0) throw new SchemaBehindError(pending, pendingRepeatables, missingKinds);
      }
      if (mode !== "ignore") await followDatabaseIdentity(pool);
      await requireReadCommitted(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PostgresPort(pool);
  }

  schemaStatus(): Promise<SchemaStatus> {
    return migrationStatus(this.pool);
  }

  async migrate(): Promise<SchemaStatus> {
    await migrate(this.pool);
    return migrationStatus(this.pool);
  }

  /**
   * Runs `work` in one READ COMMITTED transaction on one connection. A failed COMMIT means
   * nothing of it is stored, so callers must not report success: it becomes StoreUnavailableError.
   */
  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeError(error);
    }
    // A checked-out connection has no error listener of the pool's; without ours a dying
    // connection would crash the process.
    let broken: Error | undefined;
    const onError = (error: Error) => (broken = error);
    client.on("error", onError);
    try {
      await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
      const result = await work(queryable(client));
      try {
        await client.query("COMMIT");
      } catch (error) {
        broken ??= error as Error;
        throw new StoreUnavailableError("PostgreSQL commit failed", { cause: error });
      }
      return result;
    } catch (error) {
      if (!broken) await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      throw mapped(error);
    } finally {
      client.off("error", onError);
      // A connection that failed is closed rather than handed to the next caller.
      client.release(broken);
    }
  }

  async ping(): Promise<void> {
    try {
      await this.pool.query("SELECT 1");
    } catch (error) {
      throw new StoreUnavailableError("PostgreSQL does not answer", { cause: error });
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * Appends rely on READ COMMITTED: a batch row closed by another transaction is re-checked and
 * skipped, not a serialization failure. That is PostgreSQL's default; a server or role set to
 * something stricter would turn concurrent appends into 503s, so the store refuses to start.
 */
async function requireReadCommitted(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ default_transaction_isolation: string }>("SHOW default_transaction_isolation").catch((error: unknown) => {
    throw storeError(error);
  });
  const level = rows[0]?.default_transaction_isolation;
  if (level !== "read committed") {
    throw new Error(
      `PostgreSQL default_transaction_isolation is "${level}"; the store needs "read committed" (ALTER ROLE <user> SET default_transaction_isolation = 'read committed')`,
    );
  }
}
