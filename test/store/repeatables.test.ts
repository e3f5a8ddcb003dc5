/**
 * PostgreSQL's repeatable definitions (src/store/postgres/repeatables.ts): a function migrations
 * kept redefining lives in one file, applied again when it changed, in the migrations' transaction
 * and under their lock. Read here: each file's revision, its text pinned per revision, its
 * statements (functions only, nothing the expand-only or the Citus rules refuse), and arguments a
 * numbered migration gave the function. Run here: an unchanged one is not applied again, a
 * changed one once even when two processes migrate at once, an older revision never over a newer.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { readMigrations, SchemaBehindError } from "../../src/store/migrations.ts";
import { migrate, migrationStatus } from "../../src/store/postgres/migrate.ts";
import { PostgresPort } from "../../src/store/postgres/postgres-port.ts";
import { readRepeatables } from "../../src/store/postgres/repeatables.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends, queryRows, writePastStore } from "../helpers/backends.ts";
import { citusViolations, statementsOf } from "../helpers/citus-rules.ts";
import { expandViolations } from "../helpers/migration-rules.ts";

/**
 * Each revision's text, as released: a repeatable's text changes only with a new revision (and a
 * new line here), so that a process of an older release never takes its definition for a newer one.
 */
const PINNED: Record<string, Record<number, string>> = {
  wia_add_work_items: {
    1: "317e5983dc19f2b4915a930a86f9d7eaae2940fc68b2c245365645182a338f2c",
    2: "50c85259baa3457cbc7d783a5c3579cf740dda3c9bcce5906c78ede9ee7c4f42",
    3: "1bc1d96945e6a63dda8f98e30666e3974a2c82cef94e49a9ed08d51ee169de3c",
  },
  wia_add_work_item_bulk: {
    1: "7363714e81788655f58a8617e10c674f2ada2b3dc81c6a08f13b065afaf005e4",
  },
};

const repeatables = readRepeatables();
const migrations = readMigrations(new URL("../../src/store/postgres/migrations/", import.meta.url));
/** `name(arguments)` of each CREATE [OR REPLACE] FUNCTION in `sql`, arguments without spaces. */
const signatures = (sql: string) =>
  statementsOf(sql).flatMap((statement) => {
    const match = /^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(\w+)\s*\(([^)]*)\)/i.exec(statement);
    return match ? [`${match[1]!.toLowerCase()}(${match[2]!.replace(/\s+/g, " ").trim()})`] : [];
  });

test("each repeatable begins with its revision, and its text is the one pinned for that revision", () => {
  assert.ok(repeatables.some((file) => file.name === "wia_add_work_items"));
  for (const file of repeatables) {
    assert.equal(file.checksum, PINNED[file.name]?.[file.revision], `${file.name}.sql revision ${file.revision}: a changed text is a new revision, pinned here`);
  }
});

test("a repeatable creates or replaces its one function only, with arguments a numbered migration gave it", () => {
  const defined = new Set(migrations.flatMap((migration) => signatures(migration.sql)));
  for (const file of repeatables) {
    const statements = statementsOf(file.sql);
    assert.ok(statements.length > 0);
    for (const statement of statements) assert.match(statement, /^CREATE\s+OR\s+REPLACE\s+FUNCTION\s+/i, `${file.name}.sql: ${statement.slice(0, 80)}`);
    for (const signature of signatures(file.sql)) {
      assert.ok(signature.startsWith(`${file.name}(`), `${file.name}.sql defines ${signature}`);
      assert.ok(defined.has(signature), `${signature}: a new signature is an overload, made by a numbered migration first`);
    }
    assert.deepEqual(citusViolations(file.sql), [], file.name);
    // On Citus a row lock taken by a read is not held across a shard move (docs/scaling.md §3.7).
    assert.doesNotMatch(file.sql.replace(/--[^\n]*/g, ""), /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b/i, `${file.name}.sql takes a row lock by a read`);
    assert.deepEqual(expandViolations(file.sql, "postgres"), [], file.name);
  }
});

test("wia_add_work_items's first revision is the definition migration 0018 left, so its first application changes nothing", () => {
  const file = repeatables.find((each) => each.name === "wia_add_work_items")!;
  if (file.revision !== 1) return;
  const definition = (sql: string) => statementsOf(sql).find((statement) => /^CREATE\s+OR\s+REPLACE\s+FUNCTION\s+wia_add_work_items\b/i.test(statement));
  assert.equal(definition(file.sql), definition(migrations.find((migration) => migration.version === 18)!.sql));
});

const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");

test("applied after the numbered migrations: once, again only when changed, by one of two processes at once, never an older revision over a newer", async (t) => {
  if (!postgres) return t.skip("no PostgreSQL here");
  const db = await postgres.create();
  const folder = mkdtempSync(join(tmpdir(), "wia-repeatables-"));
  const url = pathToFileURL(`${folder}/`);
  const pools = [1, 2].map(() => new pg.Pool({ connectionString: db.databaseUrl, max: 1 }));
  /** The probe records each time it is applied, and its function answers its revision. */
  const probe = (revision: number, answer = revision) =>
    writeFileSync(
      join(folder, "wia_probe.sql"),
      `-- revision: ${revision}\nCREATE OR REPLACE FUNCTION wia_probe() RETURNS integer LANGUAGE sql AS $$ SELECT ${answer} $$;\nINSERT INTO probe_applied (answer) VALUES (${answer});\n`,
    );
  const applied = async () => (await queryRows<{ answer: number }>(db.location, "SELECT answer FROM probe_applied ORDER BY at")).map((row) => Number(row.answer));
  const answer = async () => Number((await queryRows<{ answer: number }>(db.location, "SELECT wia_probe() AS answer"))[0]!.answer);
  // Only the probe's: on a Citus coordinator the fresh schema comes migrated and distributed, so the shipped repeatables are recorded already.
  const state = async () => (await migrationStatus(pools[0]!, undefined, url)).repeatables?.filter((entry) => entry.name === "wia_probe");
  try {
    await writePastStore(db.location, "CREATE TABLE probe_applied (answer integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
    probe(1);
    assert.deepEqual(await state(), [{ name: "wia_probe", revision: 1, state: "pending", appliedAt: null }]);
    const [{ numbered } = { numbered: "0" }] = await queryRows<{ numbered: string }>(db.location, "SELECT count(*) AS numbered FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'");
    await migrate(pools[0]!, undefined, url);
    assert.deepEqual([await applied(), await answer()], [[1], 1], "after every numbered migration, in their run");
    assert.equal(Number((await queryRows<{ n: string }>(db.location, "SELECT count(*) AS n FROM schema_migrations"))[0]!.n), migrations.length);
    const [sameTransaction] = await queryRows<{ same: boolean }>(
      db.location,
      "SELECT (SELECT xmin::text FROM schema_migrations ORDER BY version DESC LIMIT 1) = (SELECT xmin::text FROM schema_repeatables WHERE name = 'wia_probe') AS same",
    );
    // A schema that came migrated (a Citus coordinator's is migrated and distributed first) had no
    // migration in this run to share; and one that builds an index CONCURRENTLY runs outside any
    // transaction, so after it the repeatables get one of their own.
    if (Number(numbered) === 0 && !/\bINDEX\s+CONCURRENTLY\b/i.test(migrations.at(-1)!.sql)) assert.equal(sameTransaction!.same, true, "recorded in the transaction of the last migration");

    await migrate(pools[0]!, undefined, url);
    assert.deepEqual(await applied(), [1], "an unchanged one is not applied again");

    probe(2);
    await Promise.all(pools.map((pool) => migrate(pool, undefined, url)));
    assert.deepEqual([await applied(), await answer()], [[1, 2], 2], "a new revision once, though two processes migrated at once");
    assert.deepEqual((await state())?.map((each) => [each.revision, each.state]), [[2, "applied"]]);

    probe(2, 22);
    await migrate(pools[1]!, undefined, url);
    assert.deepEqual([await applied(), await answer()], [[1, 2, 22], 22], "a text changed under the same revision (while it is written) is applied again");

    probe(1);
    assert.deepEqual((await state())?.map((each) => [each.revision, each.state]), [[2, "later"]]);
    await migrate(pools[0]!, undefined, url);
    assert.deepEqual([await applied(), await answer()], [[1, 2, 22], 22], "a previous release's process leaves the newer revision as it is");
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    rmSync(folder, { recursive: true, force: true });
    await db.cleanup();
  }
});

test("a store records the shipped repeatables; a process that must not migrate refuses one that is behind, naming it", async (t) => {
  if (!postgres) return t.skip("no PostgreSQL here");
  const db = await postgres.create();
  try {
    const store = await openStore(db.location);
    const status = await store.schemaStatus();
    await store.close();
    assert.deepEqual(
      status.repeatables?.map(({ name, revision, state }) => ({ name, revision, state })),
      repeatables.map(({ name, revision }) => ({ name, revision, state: "applied" })),
    );
    const recorded = await queryRows<{ name: string; checksum: string }>(db.location, "SELECT name, checksum FROM schema_repeatables ORDER BY name");
    assert.deepEqual(recorded, repeatables.map(({ name, checksum }) => ({ name, checksum })));

    await writePastStore(db.location, "UPDATE schema_repeatables SET revision = 0 WHERE name = 'wia_add_work_items'");
    await assert.rejects(PostgresPort.open(db.databaseUrl, 2, "require"), (error: unknown) => {
      assert.ok(error instanceof SchemaBehindError);
      assert.match(error.message, /the schema lacks migration wia_add_work_items \(repeatable, revision \d+\) that this version needs: run `npm run -s cli -- db migrate`/);
      return true;
    });
    const port = await PostgresPort.open(db.databaseUrl, 2, "apply");
    assert.deepEqual((await port.schemaStatus()).repeatables?.map((each) => each.state), repeatables.map(() => "applied"));
    await port.close();
  } finally {
    await db.cleanup();
  }
});
