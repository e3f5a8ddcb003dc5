/**
 * PostgreSQL's side of store/kinds.ts: each table's `<table>_kind_check` lists the kinds it takes,
 * and the migrator widens it when the code names a kind it lacks, in the migrations' transaction
 * and under their lock (migrate.ts). A CHECK, not a foreign key to a table of kinds: every insert
 * would lock its kind's row, and intake inserts concurrently.
 */
import type { Pool, PoolClient } from "pg";
import { KIND_TABLES, type KindTable, type TakenKinds } from "../kinds.ts";

/** The kinds `CHECK (kind IN (…))` names, as PostgreSQL prints it: `kind = ANY (ARRAY['create'::text, …])`. */
const namedKinds = (definition: string) => [...definition.matchAll(/'(\w+)'::text/g)].map((match) => match[1]!);

export async function takenKinds(db: Pool | PoolClient): Promise<TakenKinds> {
  const { rows } = await db.query<{ table_name: KindTable; definition: string }>(
    `SELECT c.relname AS table_name, pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1) AND k.conname = c.relname || '_kind_check'`,
    [KIND_TABLES],
  );
  return Object.fromEntries(rows.map((row) => [row.table_name, namedKinds(row.definition)]));
}

/**
 * Replaces the table's kind CHECK by one that also takes `added`, in the caller's transaction.
 * NOT VALID: every row already keeps to the narrower list, so the scan that would check them
 * could find nothing, and it would hold the table's lock (intake waits on it) while it read.
 */
export async function widenKindCheck(client: PoolClient, table: KindTable, taken: readonly string[], added: readonly string[]): Promise<void> {
  const kinds = [...taken, ...added].map((kind) => client.escapeLiteral(kind)).join(", ");
  // Two statements: Citus refuses an ADD CONSTRAINT beside another subcommand. The transaction
  // keeps the table from being seen without its check.
  await client.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_kind_check`);
  await client.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_kind_check CHECK (kind IN (${kinds})) NOT VALID`);
}
