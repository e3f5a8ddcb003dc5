/**
 * Applies the numbered migrations of ./migrations/ that the schema has not recorded yet, in one
 * transaction under an advisory lock, so an upgrade is applied whole or not at all (a migration
 * that builds an index CONCURRENTLY is the exception, see migrate): processes that start at the
 * same moment queue on the lock, and the ones that follow find everything applied. The lock is per schema, so test schemas in one database do not wait for
 * each other. On a schema distributed with Citus, tables the upgrade created are placed in the
 * same transaction (docs/scaling.md §3.4). The repeatable definitions of ./repeatable/ that
 * changed follow the numbered migrations, in their transaction (repeatables.ts), and then the kind
 * CHECKs are widened to the kinds the code names (kind-checks.ts).
 */
import type { Pool, PoolClient } from "pg";
import { KIND_COLUMNS, missingKinds, type KindLists } from "../kinds.ts";
import { readMigrations, schemaStatus, type AppliedMigration, type Migration, type SchemaStatus } from "../migrations.ts";
import { placeNewTables } from "./distribution.ts";
import { storeError } from "./errors.ts";
import { takenKinds, widenKindCheck } from "./kind-checks.ts";
import {
  applyRepeatables,
  CREATE_REPEATABLES_RECORD,
  dueRepeatables,
  READ_REPEATABLES,
  readRepeatables,
  repeatableStatus,
  REPEATABLES,
  toRecorded,
  type RecordedRepeatable,
  type Repeatable,
} from "./repeatables.ts";

/** First half of the advisory lock key: "wia" + "m"igrations, to stay clear of other users' locks. */
const MIGRATION_LOCK_CLASS = 0x7769616d;

const MIGRATIONS = new URL("./migrations/", import.meta.url);
/** How often a process that waits for another's migrations asks for the lock again. */
const LOCK_RETRY_MS = 100;

/** The schema's migrations, repeatables and kinds against the ones this version knows; none applied when the schema has no record yet. */
export async function migrationStatus(pool: Pool, folder = MIGRATIONS, repeatablesFolder = REPEATABLES, kinds: KindLists = KIND_COLUMNS): Promise<SchemaStatus> {
  let rows: Array<{ version: number; name: string; applied_at: Date }>;
  let recordedRepeatables: RecordedRepeatable[];
  let missing: SchemaStatus["missingKinds"];
  try {
    const records = await pool.query<{ migrations: boolean; repeatables: boolean }>(
      "SELECT to_regclass('schema_migrations') IS NOT NULL AS migrations, to_regclass('schema_repeatables') IS NOT NULL AS repeatables",
    );
    rows = records.rows[0]?.migrations ? (await pool.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")).rows : [];
    recordedRepeatables = records.rows[0]?.repeatables ? (await pool.query(READ_REPEATABLES)).rows.map(toRecorded) : [];
    missing = missingKinds(await takenKinds(pool), kinds);
  } catch (error) {
    throw storeError(error, "PostgreSQL does not answer; cannot read the schema's migrations");
  }
  const applied = rows.map((row): AppliedMigration => ({ version: Number(row.version), name: row.name, appliedAt: new Date(row.applied_at).toISOString() }));
  return {
    ...schemaStatus(readMigrations(folder), applied),
    repeatables: repeatableStatus(readRepeatables(repeatablesFolder), recordedRepeatables),
    missingKinds: missing,
  };
}

/**
 * A migration that builds an index CONCURRENTLY, so that intake and the bot go on writing while it
 * builds (the expand-only rule of SPEC §18 asks for it on an existing table). PostgreSQL runs such
 * a statement only outside a transaction, and only alone in its query.
 */
const CONCURRENT_INDEX = /\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\b/i;

/**
 * The statements of a migration that builds an index CONCURRENTLY, one by one. Such a migration
 * holds plain statements only (no function bodies): each ends at its semicolon.
 */
function plainStatements(sql: string): string[] {
  return sql
    .replace(/--[^\n]*/g, "")
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");
}

/**
 * `folder`: the migrations to apply (tests give a copy with one more); `kinds`: the kinds the
 * schema must take (tests give longer lists).
 *
 * The pending migrations are applied in one transaction, except one that builds an index
 * CONCURRENTLY: the migrations before it are committed first, it runs statement by statement,
 * and the ones after it get a transaction of their own. The repeatables that changed, and the
 * kinds the schema lacks, are applied at the end of the last transaction, or in one of their
 * own. A session-level advisory lock is held throughout, so processes that start together still
 * take turns.
 */
export async function migrate(pool: Pool, folder = MIGRATIONS, repeatablesFolder = REPEATABLES, kinds: KindLists = KIND_COLUMNS): Promise<void> {
  const migrations = readMigrations(folder);
  const repeatables = readRepeatables(repeatablesFolder);
  let client;
  try {
    client = await pool.connect();
  } catch (error) {
    throw storeError(error, "PostgreSQL does not answer; cannot apply migrations");
  }
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on("error", onError);
  const lockKey = "$1, hashtext(COALESCE(current_schema(), ''))";
  try {
    await takeTurn(client, lockKey);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)",
      );
      await client.query(CREATE_REPEATABLES_RECORD);
      const applied = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((row) => row.version));
      const pending = migrations.filter((migration) => !applied.has(migration.version));
      const due = dueRepeatables(repeatables, (await client.query(READ_REPEATABLES)).rows.map(toRecorded));
      const citus = (pending.length > 0 || due.length > 0) && (await client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'")).rows.length > 0;
      const steps = inSteps(pending);
      const last = steps.at(-1);
      for (const step of steps) {
        if (step.concurrent) await applyOutsideTransaction(client, step.migrations[0]!);
        else await applyInTransaction(client, step.migrations, citus, step === last ? { repeatables: due, kinds } : undefined);
      }
      const behind = due.length > 0 || missingKinds(await takenKinds(client), kinds).length > 0;
      if (behind && (last === undefined || last.concurrent)) await applyInTransaction(client, [], citus, { repeatables: due, kinds });
    } finally {
      // A broken connection takes its session's lock with it.
      await client.query(`SELECT pg_advisory_unlock(${lockKey})`, [MIGRATION_LOCK_CLASS]).catch(() => undefined);
    }
  } catch (error) {
    broken ??= error as Error;
    throw storeError(error, "PostgreSQL failed while applying migrations");
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/**
 * Waits for the migration lock by asking for it again and again, each time in a statement of its
 * own: a session that waited inside one statement would hold a snapshot all the while, and
 * CREATE INDEX CONCURRENTLY in the session holding the lock waits for every older snapshot to end.
 */
async function takeTurn(client: PoolClient, lockKey: string): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${lockKey}) AS taken`, [MIGRATION_LOCK_CLASS]);
    if (rows[0]?.taken) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

/** The pending migrations in order: runs of ordinary ones, and each one that builds an index CONCURRENTLY on its own. */
function inSteps(pending: Migration[]): Array<{ concurrent: boolean; migrations: Migration[] }> {
  const steps: Array<{ concurrent: boolean; migrations: Migration[] }> = [];
  for (const migration of pending) {
    const concurrent = CONCURRENT_INDEX.test(migration.sql);
    const last = steps.at(-1);
    if (!concurrent && last && !last.concurrent) last.migrations.push(migration);
    else steps.push({ concurrent, migrations: [migration] });
  }
  return steps;
}

const RECORD = "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())";

/** The migrations, then (after the last ones) the repeatables and the kinds, in one transaction. */
async function applyInTransaction(client: PoolClient, migrations: Migration[], citus: boolean, last?: { repeatables: Repeatable[]; kinds: KindLists }): Promise<void> {
  await client.query("BEGIN");
  try {
    if (citus) {
      // On a distributed schema Citus runs a DDL statement on all shards in parallel, and then
      // refuses to create a function (or another object it copies to every node) in the same
      // transaction; one shard after another it accepts both (docs/scaling.md §3.4).
      await client.query("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'");
    }
    for (const migration of migrations) {
      await client.query(migration.sql);
      await client.query(RECORD, [migration.version, migration.name]);
    }
    if (last) {
      await applyRepeatables(client, last.repeatables);
      const taken = await takenKinds(client);
      for (const { table, kinds } of missingKinds(taken, last.kinds)) await widenKindCheck(client, table, taken[table]!, kinds);
    }
    if (citus) await placeNewTables(client);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/**
 * Statement by statement, outside a transaction, so it may be run again after it stopped half-way
 * (a process killed, a unique index over duplicates): an index built whole is not built again, and
 * one left invalid by a failed build, which PostgreSQL keeps, is dropped and built anew.
 */
async function applyOutsideTransaction(client: PoolClient, migration: Migration): Promise<void> {
  for (const statement of plainStatements(migration.sql)) {
    const index = /\bINDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)"?/i.exec(statement)?.[1]?.toLowerCase();
    if (index !== undefined) {
      const existing = await client.query<{ valid: boolean }>(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
        [index],
      );
      if (existing.rows[0]?.valid === true) continue;
      if (existing.rows[0]?.valid === false) await client.query(`DROP INDEX CONCURRENTLY "${index}"`);
    }
    await client.query(statement);
  }
  await client.query(RECORD, [migration.version, migration.name]);
}
