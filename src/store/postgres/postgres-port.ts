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
import { isLostNode, ShardFanOut } from "./shard-fan-out.ts";
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

/** The transaction a Queryable runs in: how many statements it has sent, and how to begin it anew. */
interface OpenTransaction {
  statements: number;
  begin(): Promise<void>;
}

const BEGIN = "BEGIN ISOLATION LEVEL READ COMMITTED";

/**
 * Queryable over anything with pg's query(config) (the pool, or one checked-out client in
 * `transaction`). A read across companies that fails for a lost Citus node is answered shard by
 * shard instead (shard-fan-out.ts); in a transaction only as its first statement, which the
 * transaction can begin again without it: later, the transaction has done work and fails.
 */
function queryable(client: pg.Pool | pg.PoolClient, fanOut: ShardFanOut, transaction?: OpenTransaction): Queryable {
  const query = async (statement: Statement, values: readonly unknown[] = []) => {
    try {
      return await client.query({ ...named(statement), values: values as unknown[] });
    } catch (error) {
      throw mapped(error);
    }
  };
  const all = async <R>(statement: Statement, values: readonly unknown[] = []): Promise<R[]> => {
    const first = transaction ? transaction.statements++ === 0 : true;
    if (!statement.acrossCompanies) return (await query(statement, values)).rows as R[];
    if (fanOut.active) return fanOut.all<R>(statement, named(statement).text, values);
    try {
      const { rows } = await client.query({ ...named(statement), values: values as unknown[] });
      fanOut.clusterAnswered();
      return rows as R[];
    } catch (error) {
      if (!isLostNode(error)) throw mapped(error);
      fanOut.lostNode();
      if (!first) throw mapped(error);
      await transaction?.begin().catch((beginError: unknown) => {
        throw mapped(beginError);
      });
      return fanOut.all<R>(statement, named(statement).text, values);
    }
  };
  const count = () => {
    if (transaction) transaction.statements += 1;
  };
  return {
    one: async <R>(statement: Statement, values?: readonly unknown[]) => {
      count();
      return (await query(statement, values)).rows[0] as R | undefined;
    },
    all,
    run: async (statement, values) => {
      count();
      return (await query(statement, values)).rowCount ?? 0;
    },
  };
}

export class PostgresPort implements DatabasePort {
  readonly one: Queryable["one"];
  readonly all: Queryable["all"];
  readonly run: Queryable["run"];

  private readonly fanOut: ShardFanOut;

  private constructor(
    private readonly pool: pg.Pool,
    url: string,
  ) {
    this.fanOut = new ShardFanOut(url);
    ({ one: this.one, all: this.all, run: this.run } = queryable(pool, this.fanOut));
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
    return new PostgresPort(pool, url);
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
      await client.query(BEGIN);
      const open: OpenTransaction = {
        statements: 0,
        begin: async () => {
          await client.query("ROLLBACK");
          await client.query(BEGIN);
        },
      };
      const result = await work(queryable(client, this.fanOut, open));
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

  shardGroupsUnreachable(): number {
    return this.fanOut.shardGroupsUnreachable;
  }

  async close(): Promise<void> {
    await this.fanOut.close();
    await this.pool.end();
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
