/**
 * SQLite's side of store/kinds.ts: each `kind` column references a table of the kinds it takes
 * (migration 0021), which the migrator fills from the code's lists after the numbered migrations.
 * SQLite cannot alter a CHECK in place, but a table takes new rows; and the foreign key costs an
 * insert less than the CHECK did (docs/performance-log.md).
 */
import type Database from "better-sqlite3";
import { KIND_TABLES, missingKinds, type KindLists, type KindTable, type TakenKinds } from "../kinds.ts";

/** The table of the kinds each `kind` column takes. */
const KINDS_OF: Record<KindTable, string> = { work_items: "work_item_kinds", work_item_history: "work_item_history_kinds" };

export function takenKinds(db: Database.Database): TakenKinds {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
  const taken: TakenKinds = {};
  for (const table of KIND_TABLES) {
    if (tables.has(KINDS_OF[table])) taken[table] = db.prepare(`SELECT kind FROM ${KINDS_OF[table]}`).pluck().all() as string[];
  }
  return taken;
}

/**
 * Adds the kinds of `lists` the tables lack, in one IMMEDIATE transaction; read first outside it,
 * so that a process that finds none missing (every start but the first of a release) takes no
 * write lock.
 */
export function addMissingKinds(db: Database.Database, lists: KindLists): void {
  if (missingKinds(takenKinds(db), lists).length === 0) return;
  db.transaction(() => {
    for (const { table, kinds } of missingKinds(takenKinds(db), lists)) {
      const insert = db.prepare(`INSERT INTO ${KINDS_OF[table]} (kind) VALUES (?) ON CONFLICT DO NOTHING`);
      for (const kind of kinds) insert.run(kind);
    }
  }).immediate();
}
