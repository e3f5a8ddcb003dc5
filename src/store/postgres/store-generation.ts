/**
 * The database's generation (migrations 0017 and 0020, SPEC §18 and §24). A restored database's id
 * sequence goes back, so each new item keeps the generation it was added in, and the bot's
 * idempotency key carries it: none at generation 0, where the key is the item's id (SPEC §5), and
 * after a rise the generation's id, random, never one another generation of any database had: the
 * same dump restored twice gives two. The generation rises when a process opens a database
 * that is not the one recorded with it: another cluster or timeline (a base backup recovered to a
 * point in time), or a work_items table created anew (a pg_dump restored). Rising needs no step
 * of the operator's, so no kind of restore can miss it; a rise without a restore (a promoted
 * standby) only changes the keys of items added from then on, which is harmless.
 */
import { randomBytes } from "node:crypto";
import type { Pool } from "pg";
import { storeError } from "./errors.ts";

/** A generation's id: random, so no two generations of any database share one. */
const newGenerationId = () => randomBytes(8).toString("hex");

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
      const generationId = newGenerationId();
      await client.query(`UPDATE store_generation SET generation = $1, generation_id = $2, database_identity = ${DATABASE_IDENTITY}, changed_at = now()`, [
        generation,
        generationId,
      ]);
      // A constant default costs nothing on insert and reaches every statement that adds an item.
      await client.query(`ALTER TABLE work_items ALTER COLUMN store_generation SET DEFAULT ${generation}, ALTER COLUMN generation_id SET DEFAULT '${generationId}'`);
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
