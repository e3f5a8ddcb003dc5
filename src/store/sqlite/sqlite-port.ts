/**
 * The database port over better-sqlite3 (one connection, synchronous calls).
 *
 * A transaction spans several awaits of the core, and other callers share the connection, so
 * the port runs a transaction alone: statements and transactions that arrive while one is open
 * wait for its end (otherwise they would run inside it, and share its fate). When nothing is
 * open, a statement runs at once.
 *
 * Driver errors are mapped here, for every statement and commit: busy, I/O and the like become
 * StoreUnavailableError, a unique-key violation AlreadyExistsError.
 */
import type Database from "better-sqlite3";
import { AlreadyExistsError, StoreUnavailableError } from "../errors.ts";
import { dialectFor, type DatabasePort, type Dialect, type Queryable, type Statement } from "../port.ts";
import type { StoreFlags } from "../store.ts";
import { toStoreError } from "./driver-errors.ts";
import { newIdAboveRetired } from "./retired-ids.ts";
import { GENERATION_ID_READ, STORE_GENERATION_READ } from "./store-generation.ts";

export const SQLITE_FLAGS: StoreFlags = { singleWriter: true, supportsSkipLocked: false, reusesIds: true };

export const sqliteDialect: Dialect = dialectFor(SQLITE_FLAGS, {
  byteOrder: "",
  indexedBy: (index) => ` INDEXED BY ${index}`,
  notIndexed: " NOT INDEXED",
  jsonText: (column, field) => `json_extract(${column}, '$.${field}')`,
  epochHour: (column) => `(unixepoch(${column}) / 3600)`,
  jsonObject: (fields) => `json_object(${fields.map(([key, expression]) => `'${key}', ${expression}`).join(", ")})`,
  embeddedJson: (column) => `json(${column})`,
  // Timestamps are stored as toISOString() wrote them.
  isoTime: (column) => column,
  jsonAsText: (expression) => expression,
  // SQLite cannot change a column's default after it was added: each insert reads the generation.
  storeGeneration: STORE_GENERATION_READ,
  generationId: GENERATION_ID_READ,
  newId: newIdAboveRetired,
  idList: (parameter) => `SELECT value FROM json_each(${parameter})`,
});

/** `$1, $2, …` are named parameters "1", "2", … to SQLite; bind them from the values by position. */
function bindings(values: readonly unknown[]): Record<number, unknown> {
  const named: Record<number, unknown> = {};
  values.forEach((value, index) => (named[index + 1] = value));
  return named;
}

function mapped(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") {
    return new AlreadyExistsError("a row with this key already exists", { cause: error });
  }
  return toStoreError(error);
}

export class SqlitePort implements DatabasePort {
  private readonly prepared = new Map<string, Database.Statement>();
  /** The column names of each statement that returns rows, in the order of its raw rows. */
  private readonly columns = new WeakMap<Database.Statement, string[]>();
  /** Transactions, and what arrived while one was open, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private readonly direct: Queryable;

  constructor(private readonly db: Database.Database) {
    const execute = <T>(statement: Statement, values: readonly unknown[], run: (prepared: Database.Statement, ...bound: unknown[]) => T): Promise<T> => {
      try {
        const prepared = this.prepare(statement);
        return Promise.resolve(values.length === 0 ? run(prepared) : run(prepared, bindings(values)));
      } catch (error) {
        return Promise.reject(mapped(error));
      }
    };
    this.direct = {
      one: (statement, values = []) =>
        execute(statement, values, (prepared, ...bound) => {
          const row = prepared.get(...bound) as unknown[] | undefined;
          return (row && this.toObject(prepared, row)) as never;
        }),
      all: (statement, values = []) =>
        execute(statement, values, (prepared, ...bound) => (prepared.all(...bound) as unknown[][]).map((row) => this.toObject(prepared, row)) as never),
      run: (statement, values = []) => execute(statement, values, (prepared, ...bound) => prepared.run(...bound).changes),
    };
  }

  one<R>(statement: Statement, values?: readonly unknown[]): Promise<R | undefined> {
    return this.whenFree(() => this.direct.one<R>(statement, values));
  }

  all<R>(statement: Statement, values?: readonly unknown[]): Promise<R[]> {
    return this.whenFree(() => this.direct.all<R>(statement, values));
  }

  run(statement: Statement, values?: readonly unknown[]): Promise<number> {
    return this.whenFree(() => this.direct.run(statement, values));
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.exec("BEGIN IMMEDIATE");
      let result: T;
      try {
        result = await work(this.direct);
      } catch (error) {
        if (this.db.inTransaction) this.exec("ROLLBACK");
        throw error;
      }
      try {
        this.exec("COMMIT");
      } catch (error) {
        if (this.db.inTransaction) this.exec("ROLLBACK");
        throw new StoreUnavailableError("SQLite commit failed", { cause: error });
      }
      return result;
    });
  }

  /**
   * Runs `work` on the connection itself, between transactions like any statement: for what a
   * prepared statement cannot do (`PRAGMA incremental_vacuum` frees one page per step, and only
   * `pragma()` steps it to its end). Driver errors are mapped as everywhere.
   */
  withConnection<T>(work: (db: Database.Database) => T): Promise<T> {
    return this.whenFree(() => {
      try {
        return Promise.resolve(work(this.db));
      } catch (error) {
        return Promise.reject(mapped(error));
      }
    });
  }

  async ping(): Promise<void> {
    // Reads a page of the file, so an unreadable or vanished database does not look healthy.
    await this.one(PING);
  }

  /** One file, no shards. */
  shardGroupsUnreachable(): number {
    return 0;
  }

  async close(): Promise<void> {
    await this.queue;
    if (this.db.open) this.db.close();
  }

  private prepare(statement: Statement): Database.Statement {
    let prepared = this.prepared.get(statement.name);
    if (!prepared) {
      prepared = this.db.prepare(typeof statement.text === "string" ? statement.text : statement.text(sqliteDialect));
      // Rows come as arrays and become objects here: better-sqlite3 builds an object's properties
      // one by one through V8's C++ API, and a page of 50 items took 300 µs that way against
      // 207 µs for arrays zipped in JavaScript (docs/performance.md).
      if (prepared.reader) {
        prepared.raw(true);
        this.columns.set(prepared, prepared.columns().map((column) => column.name));
      }
      this.prepared.set(statement.name, prepared);
    }
    return prepared;
  }

  private toObject(prepared: Database.Statement, row: unknown[]): Record<string, unknown> {
    const names = this.columns.get(prepared)!;
    const object: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) object[names[i]!] = row[i];
    return object;
  }

  private exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (error) {
      throw mapped(error);
    }
  }

  private whenFree<T>(task: () => Promise<T>): Promise<T> {
    return this.queued === 0 ? task() : this.enqueue(task);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    this.queued += 1;
    const result = this.queue.then(task);
    this.queue = result.then(
      () => void (this.queued -= 1),
      () => void (this.queued -= 1),
    );
    return result;
  }
}

const PING: Statement = { name: "ping", text: "SELECT 1 FROM schema_migrations LIMIT 1" };
