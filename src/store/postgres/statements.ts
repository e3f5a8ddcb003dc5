/**
 * The statements only the PostgreSQL backend sends (the core's are in ../core/sql-<area>.ts): the
 * group-commit appends (single and bulk), the shared signing key and the store's size.
 */
import { statement } from "../port.ts";

export const POSTGRES_SQL = {
  /**
   * One group of appends (group commit). Every item of `$1` carries its company_id; the
   * function (migrations/0001_initial.sql) scopes each of its statements by it.
   */
  addWorkItems: statement(
    "add_work_items",
    "SELECT item_ord, outcome, batch_id, item_id, failure_code, failure_message FROM wia_add_work_items($1::json, $2::text[])",
  ),
  /**
   * One bulk add (SPEC §11.1), its own group: the function (migrations/0008, with the trace
   * context since 0018) scopes each of its statements by the company of `$1`.
   */
  addWorkItemBulk: statement(
    "add_work_item_bulk",
    `SELECT outcome, answer FROM wia_add_work_item_bulk($1::bigint, $2::text, $3::integer, $4::text[], $5::text[], $6::text[], $7::text[],
       $8::timestamptz[], $9::text, $10::text, $11::integer, $12::json, $13::text)`,
  ),
  /** Process-wide, not tenant data: the first process to get here decides the shared key; everyone reads it back. */
  insertSigningSecret: statement(
    "insert_signing_secret",
    "INSERT INTO signing_secrets (name, secret, created_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING",
  ),
  getSigningSecret: statement("get_signing_secret", "SELECT secret FROM signing_secrets WHERE name = $1"),
  /**
   * The store's size (`db status`): the catalog's, no tenant data. Relations of the schema the
   * connection's search_path names; on Citus the coordinator's shells only (the shards' sizes are
   * citus_total_relation_size's).
   */
  storageSize: statement(
    "storage_size",
    `SELECT pg_database_size(current_database()) AS database_bytes, current_schema() AS schema,
            (SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
              WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'm')) AS schema_bytes`,
  ),
};
