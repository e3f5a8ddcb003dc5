/**
 * The kinds each `kind` column takes are the ones the code names: the work items' kinds of
 * domain/work-item-kinds.ts, and the history entries' of core/transition.ts. The database refuses
 * any other, and learns a new kind from these lists each time the migrator runs, after the
 * numbered migrations, so a new kind needs no migration of its own: PostgreSQL widens its `kind`
 * CHECKs (postgres/kind-checks.ts); SQLite, which cannot alter a CHECK, adds it to the table of
 * kinds the column references (sqlite/kind-tables.ts).
 *
 * A list is only ever widened. During a rolling upgrade a process of the previous release may
 * migrate after this one, and must not take back a kind this one writes (SPEC §18), as it must not
 * put back an older revision of a repeatable.
 */
import { WORK_ITEM_KINDS } from "../domain/work-item-kinds.ts";
import { HISTORY_KINDS } from "./core/transition.ts";
import type { MissingKinds } from "./migrations.ts";

/** Each table with a `kind` column, and the kinds the code writes there. */
export const KIND_COLUMNS = { work_items: WORK_ITEM_KINDS, work_item_history: HISTORY_KINDS } as const;
export type KindTable = keyof typeof KIND_COLUMNS;
/** The kinds of each table; tests give longer lists, as a later release would. */
export type KindLists = Record<KindTable, readonly string[]>;
/** The kinds the schema takes, per table; a table left out has no list yet (its migration is pending). */
export type TakenKinds = Partial<Record<KindTable, readonly string[]>>;

export const KIND_TABLES = Object.keys(KIND_COLUMNS) as KindTable[];

/** The kinds of `lists` that `taken` lacks, per table; none for a table without a list yet. */
export function missingKinds(taken: TakenKinds, lists: KindLists = KIND_COLUMNS): Array<MissingKinds & { table: KindTable }> {
  return KIND_TABLES.flatMap((table) => {
    const has = taken[table];
    const kinds = has === undefined ? [] : lists[table].filter((kind) => !has.includes(kind));
    return kinds.length === 0 ? [] : [{ table, kinds }];
  });
}
