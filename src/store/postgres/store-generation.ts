/**
 * The database's generation (migration 0017, SPEC §18). A restored database's id sequence goes
 * back, so each new item keeps the generation it was added in, and the bot's idempotency key tells
 * items of different generations apart. The generation rises when a process opens a database
 * that is not the one recorded with it: another cluster or timeline (a base backup recovered to a
 * point in time), or a work_items table created anew (a pg_dump restored). Rising needs no step
 * of the operator's, so no kind of restore can miss it; a rise without a restore (a promoted
 * standby) only changes the keys of items added from then on, which is harmless.
 */
import type { Pool } from "pg";
import { storeError } from "./errors.ts";

/** What makes this database this one: its cluster, its timeline, and its work_items table. */
const DATABASE_IDENTITY = `(SELECT system_identifier FROM pg_control_system())::text || '/' ||
  (SELECT timeline_id FROM pg_control_checkpoint())::text || '/' || 'work_items'::regclass::oid::text`;

/** Raises the generation when the database is not the one recorded; returns the generation now. */
export async function followDatabaseIdentity(pool: Pool): Promise<number> {
  const seen = await pool.query<{ generation: number; same: boolean }>(
    `SELECT generation, database_identity = ${DATABASE_IDENTITY} AS same FROM store_generation`,
  );
  const current = seen.rows[0];
  if (current === undefined) throw new Error("the schema has no store_generation row (migration 0017)");
  if (current.same) return current.generation;
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // Processes that start together on a restored database raise it once: the first holds the row.
    const locked = await client.query<{ generation: number; same: boolean }>(
      `SELECT generation, database_identity = ${DATABASE_IDENTITY} AS same FROM store_generation FOR UPDATE`,
    );
    let generation = locked.rows[0]!.generation;
    if (!locked.rows[0]!.same) {
      generation += 1;
      await client.query(`UPDATE store_generation SET generation = $1, database_identity = ${DATABASE_IDENTITY}, changed_at = now()`, [generation]);
      // A constant default costs nothing on insert and reaches every statement that adds an item.
      await client.query(`ALTER TABLE work_items ALTER COLUMN store_generation SET DEFAULT ${generation}`);
    }
    await client.query("COMMIT");
    return generation;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw storeError(error, "PostgreSQL failed while recording the database's generation");
  } finally {
    client.release();
  }
}
