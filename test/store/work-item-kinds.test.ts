/**
 * The kinds of work item the database takes are the ones the code names: the `kind` CHECKs of
 * work_items and work_item_history, as the migrations left them in each store, against
 * domain/work-item-kinds.ts and core/transition.ts. The compiler names every table keyed by kind
 * (docs/architecture.md lists them); this is the one place it cannot see, so a new kind fails
 * here until a migration widens both CHECKs.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WORK_ITEM_KINDS } from "../../src/domain/work-item-kinds.ts";
import { HISTORY_KINDS } from "../../src/store/core/transition.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends, withPostgresAdmin } from "../helpers/backends.ts";

const sorted = (kinds: readonly string[]) => [...kinds].sort();

for (const backend of await availableBackends()) {
  describe(`the kind CHECKs [${backend.name}]`, () => {
    test("work_items takes the kinds of domain/work-item-kinds.ts, work_item_history those of core/transition.ts", async () => {
      const location = await backend.create();
      try {
        const store = await openStore(location.location);
        await store.close();
        const checked = backend.name === "postgres" ? await postgresKindChecks(location.databaseUrl) : await sqliteKindChecks(location.location);
        assert.deepEqual(checked, { work_items: sorted(WORK_ITEM_KINDS), work_item_history: sorted(HISTORY_KINDS) });
      } finally {
        await location.cleanup();
      }
    });
  });
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

/** The kinds of `kind IN (…)` in each table's CREATE TABLE, as SQLite keeps it. */
async function sqliteKindChecks(location: { kind: string; path?: string }): Promise<Record<string, string[]>> {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(location.path!, { readonly: true });
  try {
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('work_items', 'work_item_history')").all() as Array<{ name: string; sql: string }>;
    const checks: Record<string, string[]> = {};
    for (const { name, sql } of tables) {
      const lists = [...sql.matchAll(/\bkind\s+IN\s*\(([^)]*)\)/gi)];
      assert.equal(lists.length, 1, `one CHECK on kind in ${name}`);
      checks[name] = sorted([...lists[0]![1]!.matchAll(/'(\w+)'/g)].map((match) => match[1]!));
    }
    return checks;
  } finally {
    db.close();
  }
}
