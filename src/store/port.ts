/**
 * The database port: the few calls the store core (core/) makes, and all a backend has to
 * provide for them. Every store operation is written once, in core/, over this port; a backend
 * folder (sqlite/, postgres/) implements the port for its driver and holds its dialect text,
 * driver-error mapping, migrations and intake fast path.
 *
 * Statements are written with PostgreSQL's `$1, $2, …` placeholders; a statement whose text
 * differs between the two dialects takes the `Dialect` and returns its text. Each statement has
 * a name and is prepared once per connection.
 */
import type { StoreFlags } from "./store.ts";

/** A named statement of the core, prepared once. */
export interface Statement {
  readonly name: string;
  readonly text: string | ((dialect: Dialect) => string);
  /** Set on a read across companies that the bot, the dispatcher or a sweep begins with. */
  readonly acrossCompanies?: AcrossCompanies;
}

/**
 * A read across companies, said so that a sharded backend can answer it from the shards it
 * reaches when a node is lost (SPEC §23; postgres/shard-fan-out.ts): each shard answers the
 * statement alone, and the rows are merged in the statement's order and cut to its LIMIT. That
 * holds for a statement whose groups (if any) are per company, since all of a company's rows
 * live on one shard.
 */
export interface AcrossCompanies {
  /** The tenant table it reads (by its plain name); every other table it names holds no tenant data, but `colocated`. */
  readonly table: string;
  /**
   * Other tenant tables it reads beside `table`, joined on company_id: each shard reads its own
   * shard of them. Node by node, every word of the text that names a table is rewritten to a shard
   * or schema-qualified name, so no alias or column may be called like a table.
   */
  readonly colocated?: readonly string[];
  /** Its ORDER BY, as columns it returns, ascending. */
  readonly orderBy: readonly string[];
  /** The 1-based parameter that holds its LIMIT, if it has one. */
  readonly limitParameter?: number;
}

export const statement = (name: string, text: Statement["text"], acrossCompanies?: AcrossCompanies): Statement => ({ name, text, ...(acrossCompanies ? { acrossCompanies } : {}) });

/** The SQL text that differs between the backends, as fragments the core splices in. */
export interface Dialect {
  /** After a SELECT that reads rows the same transaction will update: ` FOR UPDATE` or nothing. */
  readonly forUpdate: string;
  /** After a SELECT that picks rows to claim: ` FOR UPDATE SKIP LOCKED` or nothing. */
  readonly forUpdateSkipLocked: string;
  /** After a SELECT of rows that must not change until commit: ` FOR SHARE` or nothing. */
  readonly forShare: string;
  /** Ordering of text by bytes, the order intake locks batches in: ` COLLATE "C"` or nothing. */
  readonly byteOrder: string;
  /** An index hint after a table name, where the planner needs one: ` INDEXED BY <name>` or nothing. */
  indexedBy(index: string): string;
  /** After a table name: read it by its key alone, no index, where a range of ids must bound the read: ` NOT INDEXED` or nothing. */
  readonly notIndexed: string;
  /** A top-level field of a JSON column, as text. */
  jsonText(column: string, field: string): string;
  /** The whole hours since 1970 of a timestamp column, an integer: the hour it falls in, whatever the session's time zone. */
  epochHour(column: string): string;
  /** A JSON object built from [key, expression] pairs (core/item-json.ts). */
  jsonObject(fields: Array<[key: string, expression: string]>): string;
  /** A JSON column as a value inside jsonObject, not as a string holding JSON. */
  embeddedJson(column: string): string;
  /** A timestamp column as toISOString() writes it: UTC, milliseconds, Z. */
  isoTime(column: string): string;
  /** A JSON value as its text, so the driver hands the text over unparsed. */
  jsonAsText(expression: string): string;
  /**
   * The value of a new work item's store_generation (migration 0017): `DEFAULT` where the column's
   * default follows the generation, or a read of the one-row store_generation table.
   */
  readonly storeGeneration: string;
  /** The value of a new work item's generation_id (migration 0020), the same way. */
  readonly generationId: string;
  /**
   * The value of a new row's id in a table whose ids an erase may delete (SPEC §22: no id comes
   * back): `DEFAULT` where the ids come from a sequence, or the id above the largest one erased
   * (sqlite/migrations/0023).
   */
  newId(table: RetiredIdTable): string;
  /** A SELECT of the ids in a parameter that holds them as a JSON array, for `IN (…)`. */
  idList(parameter: string): string;
}

/** The tables whose ids an erase retires for good (SPEC §22). */
export type RetiredIdTable = "work_items" | "work_batches" | "webhook_outbox";

/**
 * A backend's dialect: the row-lock clauses follow from its flags (a single writer holds the
 * whole database for a write transaction, so it has no row locks), the rest is its own text.
 */
export function dialectFor(flags: StoreFlags, text: Omit<Dialect, "forUpdate" | "forShare" | "forUpdateSkipLocked">): Dialect {
  const rowLocks = !flags.singleWriter;
  return {
    forUpdate: rowLocks ? " FOR UPDATE" : "",
    forShare: rowLocks ? " FOR SHARE" : "",
    forUpdateSkipLocked: flags.supportsSkipLocked ? " FOR UPDATE SKIP LOCKED" : rowLocks ? " FOR UPDATE" : "",
    ...text,
  };
}

/** One statement at a time, on its own or inside a transaction. */
export interface Queryable {
  /** The first row, or undefined. */
  one<R>(statement: Statement, values?: readonly unknown[]): Promise<R | undefined>;
  all<R>(statement: Statement, values?: readonly unknown[]): Promise<R[]>;
  /** Runs a write; resolves to the number of rows it changed. */
  run(statement: Statement, values?: readonly unknown[]): Promise<number>;
}

export interface DatabasePort extends Queryable {
  /**
   * Runs `work` in one transaction that holds what it writes until commit (PostgreSQL: READ
   * COMMITTED with row locks; SQLite: BEGIN IMMEDIATE, and no other statement of this
   * connection runs until it ends). A failed commit throws StoreUnavailableError.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Resolves when the database answers; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /** Shard groups the last read across companies could not reach; 0 on a store of one node. */
  shardGroupsUnreachable(): number;
  close(): Promise<void>;
}
