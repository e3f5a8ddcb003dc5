/**
 * The schema the migrations make, held to the placement Citus needs (docs/scaling.md §3), on
 * plain PostgreSQL: TABLE_PLACEMENTS names every table, in foreign-key order; tenant tables have
 * company_id in every key; no table Citus would hold has a trigger. Then `db distribute` as a
 * process: without Citus it changes nothing and says why; with Citus (TEST_DATABASE_URL naming
 * a Citus coordinator) it places every table, and a second run finds them in place.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { openStore } from "../../src/store/open-store.ts";
import { DISTRIBUTION_COLUMN, TABLE_PLACEMENTS, type DistributionResult, type TableRole } from "../../src/store/postgres/distribution.ts";
import { migrate } from "../../src/store/postgres/migrate.ts";
import { availableBackends, postgresBackend, postgresUrlForSchema, sqliteBackend, withPostgresAdmin } from "../helpers/backends.ts";
import { runCli } from "../helpers/processes.ts";

const hasPostgres = (await availableBackends()).includes(postgresBackend);
const onCitus = hasPostgres && (await withPostgresAdmin((client) => client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'"))).rows.length > 0;
const roleOf = new Map<string, TableRole>(TABLE_PLACEMENTS.map((p) => [p.table, p.role]));
const positionOf = new Map(TABLE_PLACEMENTS.map((p, index) => [p.table, index]));

/** A fresh schema, migrated by opening a store on it. */
async function migratedSchema() {
  const created = await postgresBackend.create();
  const store = await openStore(created.location);
  await store.close();
  const schema = /search_path%3D(\w+)/.exec(created.databaseUrl)![1]!;
  const query = <R extends Record<string, unknown>>(sql: string) => withPostgresAdmin(async (client) => (await client.query<R>(sql, [schema])).rows);
  return { ...created, schema, query };
}

describe("the PostgreSQL schema fits its Citus placement", { skip: !hasPostgres && "PostgreSQL does not answer" }, () => {
  let schema: Awaited<ReturnType<typeof migratedSchema>>;
  before(async () => (schema = await migratedSchema()));
  after(() => schema?.cleanup());

  test("TABLE_PLACEMENTS names each table of the migrated schema, once", async () => {
    const tables = await schema.query<{ relname: string }>("SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p') ORDER BY relname");
    const listed = TABLE_PLACEMENTS.map((p) => p.table);
    assert.equal(new Set(listed).size, listed.length, "a table is listed twice");
    assert.deepEqual(tables.map((t) => t.relname), [...listed].sort(), "add a new table to TABLE_PLACEMENTS (src/store/postgres/distribution.ts) with its role");
  });

  test("a table comes after those it refers to; foreign keys run between distributed tables on company_id, or to reference tables", async () => {
    const keys = await schema.query<{ source: string; target: string; columns: string[] }>(
      `SELECT s.relname AS source, t.relname AS target,
              ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)) AS columns
         FROM pg_constraint c JOIN pg_class s ON s.oid = c.conrelid JOIN pg_class t ON t.oid = c.confrelid
        WHERE c.contype = 'f' AND s.relnamespace = $1::regnamespace`,
    );
    assert.ok(keys.length >= 7, "the schema's foreign keys are read");
    for (const { source, target, columns } of keys) {
      const where = `${source} → ${target} (${columns.join(", ")})`;
      // A table may refer to itself (a change to its original, work_items → work_items).
      if (target !== source) assert.ok(positionOf.get(target)! < positionOf.get(source)!, `${where}: ${target} must come first in TABLE_PLACEMENTS`);
      if (roleOf.get(source) === "distributed" && roleOf.get(target) === "distributed") assert.ok(columns.includes(DISTRIBUTION_COLUMN), `${where}: a key between distributed tables includes ${DISTRIBUTION_COLUMN}`);
      else assert.equal(roleOf.get(target), "reference", `${where}: a ${roleOf.get(source)} table may only refer to reference tables`);
    }
  });

  test("every distributed table has company_id bigint NOT NULL, in its primary key and in every unique index", async () => {
    const columns = await schema.query<{ relname: string; type: string; notnull: boolean }>(
      `SELECT c.relname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull
         FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'company_id' AND NOT a.attisdropped
        WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r'`,
    );
    const uniques = await schema.query<{ relname: string; index: string; primary: boolean; columns: string[] }>(
      `SELECT t.relname, i.relname AS index, x.indisprimary AS primary,
              ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = x.indrelid AND a.attnum = ANY (x.indkey)) AS columns
         FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indisunique AND t.relnamespace = $1::regnamespace`,
    );
    const distributed = TABLE_PLACEMENTS.filter((p) => p.role === "distributed").map((p) => p.table);
    for (const table of distributed) {
      const column = columns.find((c) => c.relname === table);
      assert.deepEqual(column && { type: column.type, notnull: column.notnull }, { type: "bigint", notnull: true }, `${table}.company_id`);
      assert.ok(uniques.some((u) => u.relname === table && u.primary), `${table} has a primary key`);
      for (const unique of uniques.filter((u) => u.relname === table)) assert.ok(unique.columns.includes(DISTRIBUTION_COLUMN), `${table}: ${unique.index} (${unique.columns.join(", ")})`);
    }
  });

  test("no table but the coordinator's own has a trigger", async () => {
    // Citus itself puts a TRUNCATE trigger on the tables it holds.
    const triggers = await schema.query<{ relname: string; tgname: string }>(
      `SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = $1::regnamespace AND NOT t.tgisinternal AND t.tgname NOT LIKE 'truncate_trigger%'`,
    );
    assert.deepEqual(triggers.filter((t) => roleOf.get(t.relname) !== "local"), []);
  });
});

test("SQLite: no trigger left on any table (the counts move in the store's statements)", async () => {
  const created = await sqliteBackend.create();
  try {
    const store = await openStore(created.location);
    await store.close();
    const db = new Database(created.location.kind === "sqlite" ? created.location.path : "", { readonly: true });
    const triggers = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all();
    db.close();
    assert.deepEqual(triggers, []);
  } finally {
    await created.cleanup();
  }
});

describe("db distribute", () => {
  test("on PostgreSQL without Citus: says so, exits 1, and changes nothing", { skip: (!hasPostgres && "PostgreSQL does not answer") || (onCitus && "the test database has Citus") }, async () => {
    const schema = await migratedSchema();
    try {
      const catalogue = () =>
        schema.query<{ entry: string }>(
          `SELECT c.relname || ' ' || c.relkind::text AS entry FROM pg_class c WHERE c.relnamespace = $1::regnamespace
           UNION ALL SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE connamespace = $1::regnamespace
           UNION ALL SELECT 'extension ' || extname FROM pg_extension ORDER BY 1`,
        );
      const before = await catalogue();
      const result = await runCli(["db", "distribute"], { DATABASE_URL: schema.databaseUrl, LOG_LEVEL: "silent" });
      assert.equal(result.code, 1, result.stderr);
      // Which of the two depends on whether this server has Citus's files (it need not).
      assert.match(result.stderr, /(no Citus extension, so there is nothing to distribute|has not created the citus extension \(the server has it\)).*Nothing was changed\./);
      assert.equal(result.stdout.trim(), "");
      assert.deepEqual(await catalogue(), before);
    } finally {
      await schema.cleanup();
    }
  });

  test("on SQLite: says distribution is for PostgreSQL with Citus, exits 1", async () => {
    const created = await sqliteBackend.create();
    try {
      const result = await runCli(["db", "distribute", "--json"], { DATABASE_URL: created.databaseUrl, LOG_LEVEL: "silent" });
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /SQLite file; distribution is for PostgreSQL with the Citus extension\. Nothing was changed\./);
    } finally {
      await created.cleanup();
    }
  });

  test("on Citus: migrates and places every table as listed, one line each, and a second run finds them in place", { skip: !onCitus && "TEST_DATABASE_URL is not a Citus coordinator" }, async () => {
    // Not through postgresBackend, which distributes its schemas on Citus: the command starts from nothing.
    const name = `wia_test_${Math.floor(Date.now() / 1000)}_distribute_${process.pid}`;
    await withPostgresAdmin((client) => client.query(`CREATE SCHEMA ${name}`));
    const databaseUrl = postgresUrlForSchema(name);
    const schema = {
      databaseUrl,
      query: <R extends Record<string, unknown>>(sql: string) => withPostgresAdmin(async (client) => (await client.query<R>(sql, [name])).rows),
      cleanup: () => withPostgresAdmin(async (client) => void (await client.query(`DROP SCHEMA ${name} CASCADE`))),
    };
    try {
      const first = await runCli(["db", "distribute"], { DATABASE_URL: schema.databaseUrl, LOG_LEVEL: "silent" });
      assert.equal(first.code, 0, first.stderr);
      for (const { table, role } of TABLE_PLACEMENTS) assert.match(first.stdout, new RegExp(`^${table} +${role} +(distributed on company_id|made a reference table|kept local)$`, "m"));
      const placed = await schema.query<{ relname: string; partmethod: string; repmodel: string }>(
        `SELECT c.relname, p.partmethod, p.repmodel FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE c.relnamespace = $1::regnamespace`,
      );
      const citusRole = (table: string) => {
        const row = placed.find((p) => p.relname === table);
        return !row ? "local" : row.partmethod === "h" ? "distributed" : row.repmodel === "t" ? "reference" : "citus local";
      };
      for (const { table, role } of TABLE_PLACEMENTS) assert.equal(citusRole(table), role, table);

      const second = await runCli(["db", "distribute", "--json"], { DATABASE_URL: schema.databaseUrl, LOG_LEVEL: "silent" });
      assert.equal(second.code, 0, second.stderr);
      const again = second.json<Extract<DistributionResult, { citus: true }>>();
      assert.deepEqual(new Set(again.tables.map((step) => step.outcome)), new Set(["already in place", "kept local"]));

      // A schema distributed before SPEC §23 has the hot path's state as reference tables: the step moves them back, rows and all.
      const hotPathState = TABLE_PLACEMENTS.filter(({ table, role }) => role === "local" && (table.startsWith("authority_") || table === "bot_last_pass")).map(({ table }) => table);
      assert.deepEqual(hotPathState, ["authority_breakers", "authority_capacity", "authority_slots", "bot_last_pass"]);
      await withPostgresAdmin(async (client) => {
        await client.query(`INSERT INTO ${name}.authority_breakers (authority, state, updated_at) VALUES ('http', 'closed', now())`);
        for (const table of hotPathState) await client.query("SELECT create_reference_table($1)", [`${name}.${table}`]);
      });
      const third = await runCli(["db", "distribute", "--json"], { DATABASE_URL: schema.databaseUrl, LOG_LEVEL: "silent" });
      assert.equal(third.code, 0, third.stderr);
      const moved = third.json<Extract<DistributionResult, { citus: true }>>().tables.filter((step) => step.outcome === "moved to the coordinator").map((step) => step.table);
      assert.deepEqual(moved, hotPathState);
      const left = await schema.query<{ relname: string }>(`SELECT c.relname FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE c.relnamespace = $1::regnamespace AND c.relname LIKE ANY (ARRAY['authority_%', 'bot_last_pass'])`);
      assert.deepEqual(left, [], "none of them is a Citus table any more");
      assert.deepEqual(await schema.query(`SELECT authority, state FROM ${name}.authority_breakers WHERE $1::text IS NOT NULL`), [{ authority: "http", state: "closed" }]);
    } finally {
      await schema.cleanup();
    }
  });
});

test("on Citus: an upgrade of a distributed schema makes a function after DDL and places the table it rebuilt, in its one transaction", { skip: !onCitus && "TEST_DATABASE_URL is not a Citus coordinator" }, async () => {
  const schema = await migratedSchema(); // distributed by the test helpers on Citus
  const folder = mkdtempSync(join(tmpdir(), "wia-migrations-"));
  try {
    const shipped = fileURLToPath(new URL("../../src/store/postgres/migrations/", import.meta.url));
    for (const file of readdirSync(shipped)) copyFileSync(join(shipped, file), join(folder, file));
    writeFileSync(
      join(folder, "9999_upgrade_probe.sql"),
      `ALTER TABLE work_items ADD COLUMN upgrade_probe text;
       CREATE FUNCTION wia_upgrade_probe() RETURNS integer LANGUAGE sql AS $$ SELECT 1 $$;
       DROP TABLE status_lanes;
       CREATE TABLE status_lanes (company_id bigint NOT NULL, work_type text NOT NULL, ready_at timestamptz NOT NULL, PRIMARY KEY (company_id, work_type));
       CREATE INDEX status_lanes_due ON status_lanes (ready_at);`,
    );
    const pool = new pg.Pool({ connectionString: schema.databaseUrl, max: 1 });
    try {
      await migrate(pool, pathToFileURL(`${folder}/`));
    } finally {
      await pool.end();
    }
    const [state] = await schema.query<{ lanes: string | null; probe: boolean; recorded: boolean }>(
      `SELECT (SELECT p.partmethod::text FROM pg_dist_partition p WHERE p.logicalrelid = format('%I.status_lanes', $1::text)::regclass) AS lanes,
              EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'wia_upgrade_probe' AND pronamespace = $1::regnamespace) AS probe,
              EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = format('%I.work_items', $1::text)::regclass AND attname = 'upgrade_probe') AS recorded`,
    );
    assert.deepEqual(state, { lanes: "h", probe: true, recorded: true });
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await schema.cleanup();
  }
});
