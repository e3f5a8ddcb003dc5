/**
 * Applies the numbered migrations of ./migrations/ that the schema has not recorded yet, all in
 * one transaction under an advisory lock, so an upgrade is applied whole or not at all:
 * processes that start at the same moment queue on the lock, and the ones that follow find
 * everything applied. The lock is per schema, so test schemas in one database do not wait for
 * each other. On a schema distributed with Citus, tables the upgrade created are placed in the
 * same transaction (docs/scaling.md §3.4).
 */
import type { Pool } from "pg";
import { readMigrations, schemaStatus, type AppliedMigration, type SchemaStatus } from "../migrations.ts";
import { placeNewTables } from "./distribution.ts";
import { storeError } from "./errors.ts";

/** First half of the advisory lock key: "wia" + "m"igrations, to stay clear of other users' locks. */
const MIGRATION_LOCK_CLASS = 0x7769616d;

const MIGRATIONS = new URL("./migrations/", import.meta.url);

/** The schema's migrations against the ones this version knows; none applied when the schema has no record yet. */
export async function migrationStatus(pool: Pool, folder = MIGRATIONS): Promise<SchemaStatus> {
  let rows: Array<{ version: number; name: string; applied_at: Date }>;
  try {
    const recorded = await pool.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS recorded");
    rows = recorded.rows[0]?.recorded ? (await pool.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")).rows : [];
  } catch (error) {
    throw storeError(error, "PostgreSQL does not answer; cannot read the schema's migrations");
  }
  const applied = rows.map((row): AppliedMigration => ({ version: Number(row.version), name: row.name, appliedAt: new Date(row.applied_at).toISOString() }));
  return schemaStatus(readMigrations(folder), applied);
}

/** `folder`: the migrations to apply (tests give a copy with one more). */
export async function migrate(pool: Pool, folder = MIGRATIONS): Promise<void> {
  const migrations = readMigrations(folder);
  let client;
  try {
    client = await pool.connect();
  } catch (error) {
    throw storeError(error, "PostgreSQL does not answer; cannot apply migrations");
  }
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext(COALESCE(current_schema(), '')))", [MIGRATION_LOCK_CLASS]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)",
    );
    const applied = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((row) => row.version));
    const pending = migrations.filter((migration) => !applied.has(migration.version));
    const citus = pending.length > 0 && (await client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'")).rows.length > 0;
    if (citus) {
      // On a distributed schema Citus runs a DDL statement on all shards in parallel, and then
      // refuses to create a function (or another object it copies to every node) in the same
      // transaction; one shard after another it accepts both (docs/scaling.md §3.4).
      await client.query("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'");
    }
    for (const migration of pending) {
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, now())", [migration.version, migration.name]);
    }
    if (citus) await placeNewTables(client);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    broken ??= error as Error;
    throw storeError(error, "PostgreSQL failed while applying migrations");
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
