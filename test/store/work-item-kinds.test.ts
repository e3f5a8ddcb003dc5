/**
 * The kinds of work item the database takes are the ones the code names (src/store/kinds.ts): the
 * `kind` CHECKs of work_items and work_item_history on PostgreSQL, the tables of kinds their `kind`
 * columns reference on SQLite, against domain/work-item-kinds.ts and core/transition.ts. The
 * database refuses any other kind; a kind a later release names is added by its migrator, and
 * kept when a process of the release before migrates again; a process that must not migrate
 * refuses a schema that lacks one, naming it.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import type { StoreLocation } from "../../src/config.ts";
import { WORK_ITEM_KINDS } from "../../src/domain/work-item-kinds.ts";
import { HISTORY_KINDS } from "../../src/store/core/transition.ts";
import { KIND_COLUMNS, type KindLists } from "../../src/store/kinds.ts";
import { SchemaBehindError } from "../../src/store/migrations.ts";
import { openStore } from "../../src/store/open-store.ts";
import { migrate as migratePostgres } from "../../src/store/postgres/migrate.ts";
import { migrate as migrateSqlite } from "../../src/store/sqlite/sqlite-store.ts";
import { availableBackends, queryRows, withPostgresAdmin, writePastStore } from "../helpers/backends.ts";
import { addItems } from "../helpers/store-items.ts";

const sorted = (kinds: readonly string[]) => [...kinds].sort();
const COMPANY = 7;

/** What a later release would name: one kind more of each. */
const LATER: KindLists = { work_items: [...KIND_COLUMNS.work_items, "amend"], work_item_history: [...KIND_COLUMNS.work_item_history, "amend"] };

/** This version's migrator, on the location, with `lists` for the code's. */
async function migrateWith(location: StoreLocation, lists: KindLists): Promise<void> {
  if (location.kind === "sqlite") {
    mkdirSync(dirname(location.path), { recursive: true });
    const db = new Database(location.path);
    try {
      migrateSqlite(db, lists);
    } finally {
      db.close();
    }
    return;
  }
  const pool = new pg.Pool({ connectionString: location.url, max: 1 });
  try {
    await migratePostgres(pool, undefined, undefined, lists);
  } finally {
    await pool.end();
  }
}

for (const backend of await availableBackends()) {
  /** The kinds each table takes, read from the schema as each store keeps them. */
  const kindsTaken = (location: StoreLocation, databaseUrl: string) => (backend.name === "postgres" ? postgresKindChecks(databaseUrl) : sqliteKindTables(location));

  describe(`the kinds the database takes [${backend.name}]`, () => {
    test("work_items takes the kinds of domain/work-item-kinds.ts, work_item_history those of core/transition.ts, and no other", async () => {
      const { location, databaseUrl, cleanup } = await backend.create();
      try {
        const store = await openStore(location);
        await store.createCompany({ companyId: COMPANY, name: "Kinds" });
        const [original, other] = await addItems(store, COMPANY, 2);
        await store.close();
        assert.deepEqual(await kindsTaken(location, databaseUrl), { work_items: sorted(WORK_ITEM_KINDS), work_item_history: sorted(HISTORY_KINDS) });

        // A follow-up of itself keeps the other CHECKs, so only the kind is left to refuse.
        const setKind = (kind: string, workItemId: number) =>
          writePastStore(location, "UPDATE work_items SET kind = $1, original_work_item_id = work_item_id WHERE company_id = $2 AND work_item_id = $3", [kind, COMPANY, workItemId]);
        const addEntry = (kind: string) =>
          writePastStore(location, "INSERT INTO work_item_history (company_id, work_item_id, at, kind) VALUES ($1, $2, $3, $4)", [COMPANY, original!.workItemId, new Date().toISOString(), kind]);
        const refused = backend.name === "postgres" ? /violates check constraint "work_item(s|_history)_kind_check"/ : /FOREIGN KEY constraint failed/;
        await assert.rejects(setKind("amend", original!.workItemId), refused);
        await assert.rejects(addEntry("amend"), refused);
        assert.equal(await setKind("change", other!.workItemId), 1, "a kind the code names is taken");
        assert.equal(await addEntry("status"), 1);
      } finally {
        await cleanup();
      }
    });

    test("a kind a later release names is added by its migrator and kept by this one's; a process that must not migrate refuses a schema without it", async () => {
      const { location, databaseUrl, cleanup } = await backend.create();
      try {
        await migrateWith(location, KIND_COLUMNS);
        await migrateWith(location, LATER);
        const later = { work_items: sorted(LATER.work_items), work_item_history: sorted(LATER.work_item_history) };
        assert.deepEqual(await kindsTaken(location, databaseUrl), later);
        await migrateWith(location, KIND_COLUMNS);
        assert.deepEqual(await kindsTaken(location, databaseUrl), later, "never narrowed: the later release's processes still write it");

        await takeBack(location, "withdraw");
        await assert.rejects(openStore(location, { migrations: "require" }), (error: unknown) => {
          assert.ok(error instanceof SchemaBehindError, String(error));
          assert.match(error.message, /^the schema lacks the kinds withdraw of work_items that this version needs: run `npm run -s cli -- db migrate`/);
          return true;
        });
        const store = await openStore(location, { migrations: "ignore" });
        assert.deepEqual((await store.schemaStatus()).missingKinds, [{ table: "work_items", kinds: ["withdraw"] }]);
        await store.migrate();
        assert.deepEqual((await store.schemaStatus()).missingKinds, []);
        await store.close();
        assert.deepEqual(await kindsTaken(location, databaseUrl), later);
      } finally {
        await cleanup();
      }
    });
  });
}

/** The schema as a release without `kind` among work_items' kinds left it. */
async function takeBack(location: StoreLocation, kind: string): Promise<void> {
  if (location.kind === "sqlite") {
    await writePastStore(location, "DELETE FROM work_item_kinds WHERE kind = $1", [kind]);
    return;
  }
  const kept = (await queryRows<{ definition: string }>(location, "SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = 'work_items_kind_check' AND conrelid = 'work_items'::regclass"))[0]!;
  const others = [...kept.definition.matchAll(/'(\w+)'::text/g)].map((match) => `'${match[1]}'`).filter((each) => each !== `'${kind}'`);
  // Apart: Citus refuses an ADD CONSTRAINT beside another subcommand.
  await writePastStore(location, "ALTER TABLE work_items DROP CONSTRAINT work_items_kind_check");
  await writePastStore(location, `ALTER TABLE work_items ADD CONSTRAINT work_items_kind_check CHECK (kind IN (${others.join(", ")}))`);
}

/** The kinds each table's CHECK on `kind` lists: `kind = ANY (ARRAY['create'::text, …])`. */
async function postgresKindChecks(databaseUrl: string): Promise<Record<string, string[]>> {
  const schema = /search_path%3D(\w+)/.exec(databaseUrl)![1]!;
  const { rows } = await withPostgresAdmin((client) =>
    client.query<{ table_name: string; definition: string }>(
      `SELECT c.relname AS table_name, pg_get_constraintdef(k.oid) AS definition
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.contype = 'c' AND n.nspname = $1 AND c.relname IN ('work_items', 'work_item_history')
          AND pg_get_constraintdef(k.oid) ~ '\\ykind = ANY'`,
      [schema],
    ),
  );
  const checks: Record<string, string[]> = {};
  for (const { table_name, definition } of rows) {
    assert.equal(checks[table_name], undefined, `one CHECK on kind in ${table_name}`);
    checks[table_name] = sorted([...definition.matchAll(/'(\w+)'::text/g)].map((match) => match[1]!));
  }
  return checks;
}

/** The kinds in the table each table's `kind` references, and no CHECK on `kind` left in it. */
async function sqliteKindTables(location: StoreLocation): Promise<Record<string, string[]>> {
  const db = new Database(location.kind === "sqlite" ? location.path : "", { readonly: true });
  try {
    const checks: Record<string, string[]> = {};
    for (const table of ["work_items", "work_item_history"]) {
      const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string) ?? "";
      assert.doesNotMatch(sql, /\bkind\s+IN\s*\(/i, `${table} keeps no CHECK on kind`);
      const references = (db.prepare(`PRAGMA foreign_key_list(${table})`).all() as Array<{ from: string; table: string; to: string }>).filter((key) => key.from === "kind");
      assert.equal(references.length, 1, `${table}.kind references one table of kinds`);
      checks[table] = sorted(db.prepare(`SELECT ${references[0]!.to} FROM ${references[0]!.table}`).pluck().all() as string[]);
    }
    return checks;
  } finally {
    db.close();
  }
}
