/**
 * The embedded store's generation (migration 0017): 0 until the first `db restore`, which raises
 * it in the copy it puts in place. Each new work item keeps the generation it was added in, and
 * the bot's idempotency key tells items of different generations apart (SPEC §18).
 */
import type Database from "better-sqlite3";

/** The generation, as the value of a new work item's column. */
export const STORE_GENERATION_READ = "(SELECT generation FROM store_generation)";

/** The next generation, in a store no process uses (`db restore`'s copy before it is put in place). */
export function raiseStoreGeneration(db: Database.Database, now: string): number {
  const row = db.prepare("UPDATE store_generation SET generation = generation + 1, changed_at = ? RETURNING generation").get(now) as { generation: number } | undefined;
  if (row === undefined) throw new Error("the store has no store_generation row (migration 0017)");
  return row.generation;
}
