/**
 * A PostgreSQL migration that builds an index CONCURRENTLY (SPEC §18: an index on an existing
 * table must not block writes) runs outside the migrator's transaction: the migrations before it
 * are committed, it runs statement by statement, the ones after it get their own transaction.
 * A build that fails leaves PostgreSQL's invalid index behind; running the migrations again
 * drops it and builds the index whole. Processes that migrate at once still take turns.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { migrate } from "../../src/store/postgres/migrate.ts";
import { availableBackends, queryRows, writePastStore } from "../helpers/backends.ts";

test("a migration with CREATE INDEX CONCURRENTLY runs outside the transaction, and again after a failed build", async (t) => {
  const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");
  if (!postgres) return t.skip("no PostgreSQL here");
  const db = await postgres.create();
  const folder = mkdtempSync(join(tmpdir(), "wia-migrations-"));
  const pools = [1, 2].map(() => new pg.Pool({ connectionString: db.databaseUrl, max: 1 }));
  try {
    const shipped = fileURLToPath(new URL("../../src/store/postgres/migrations/", import.meta.url));
    for (const file of readdirSync(shipped)) copyFileSync(join(shipped, file), join(folder, file));
    writeFileSync(join(folder, "9997_probe_table.sql"), "CREATE TABLE migration_probe (company_id bigint NOT NULL, label text NOT NULL);\nINSERT INTO migration_probe VALUES (1, 'a'), (1, 'a');");
    writeFileSync(
      join(folder, "9998_probe_index.sql"),
      "-- Built while writers go on.\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS migration_probe_label ON migration_probe (company_id, label);\nCREATE INDEX CONCURRENTLY IF NOT EXISTS migration_probe_by_label ON migration_probe (label);",
    );
    writeFileSync(join(folder, "9999_probe_after.sql"), "ALTER TABLE migration_probe ADD COLUMN note text;");
    const probes = pathToFileURL(`${folder}/`);
    const recorded = async () => (await queryRows<{ version: number }>(db.location, "SELECT version FROM schema_migrations WHERE version > 9000 ORDER BY version")).map((row) => Number(row.version));
    const indexes = async () =>
      queryRows<{ name: string; valid: boolean }>(
        db.location,
        "SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 'migration_probe_%' AND c.relnamespace = current_schema()::regnamespace ORDER BY 1",
      );

    // The duplicates make the unique build fail: what came before it stays, the rest waits.
    await assert.rejects(migrate(pools[0]!, probes), /could not create unique index "migration_probe_label"/);
    assert.deepEqual(await recorded(), [9997]);
    assert.deepEqual(await indexes(), [{ name: "migration_probe_label", valid: false }], "PostgreSQL keeps the failed build as an invalid index");

    // Put right, and run by two processes at once: they take turns, and the index is built whole.
    await writePastStore(db.location, "DELETE FROM migration_probe WHERE ctid IN (SELECT max(ctid) FROM migration_probe)");
    await Promise.all(pools.map((pool) => migrate(pool, probes)));
    assert.deepEqual(await recorded(), [9997, 9998, 9999]);
    assert.deepEqual(await indexes(), [
      { name: "migration_probe_by_label", valid: true },
      { name: "migration_probe_label", valid: true },
    ]);
    await assert.rejects(writePastStore(db.location, "INSERT INTO migration_probe (company_id, label) VALUES (1, 'a')"), /duplicate key/, "the unique index holds");
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    rmSync(folder, { recursive: true, force: true });
    await db.cleanup();
  }
});
