/**
 * The pool, and the two ways code in this folder talks to PostgreSQL: one named statement
 * (`query`), or several in one transaction (`withTransaction`). Both turn connection trouble
 * into StoreUnavailableError (see errors.ts). New store methods need nothing else: add their
 * SQL to statements.ts and call one of these.
 */
import pg from "pg";
import { StoreUnavailableError } from "../../errors.ts";
import { storeError } from "./errors.ts";
import { migrate } from "./migrate.ts";
import { SQL, type Statement } from "./statements.ts";

/** Runs one named statement. */
export type Query = <R extends pg.QueryResultRow = pg.QueryResultRow>(statement: Statement, values?: unknown[]) => Promise<pg.QueryResult<R>>;

export class Database {
  private constructor(private readonly pool: pg.Pool) {}

  /** Opens a pool of at most `poolSize` connections and applies pending migrations. */
  static async open(url: string, poolSize: number): Promise<Database> {
    const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: "work-item-api" });
    // An idle connection that dies (a database restart) is dropped by the pool; the next
    // query opens a new one. Without a listener the process would crash.
    pool.on("error", () => undefined);
    try {
      await migrate(pool);
      await requireReadCommitted(pool);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new Database(pool);
  }

  /** One statement; on its own it is its own transaction, settled only after its COMMIT. */
  readonly query: Query = async (statement, values = []) => {
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
    // A checked-out connection has no error listener of the pool's; without ours a dying
    // connection would crash the process.
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

  end(): Promise<void> {
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
