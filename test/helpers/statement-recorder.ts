/**
 * Records every SQL statement the store sends, at the drivers (better-sqlite3's prepare and
 * exec, pg's Client.query), and checks that each names `company_id` (SPEC §0, docs/scaling.md).
 * The store itself is not touched: this watches what reaches the databases.
 *
 * Not tenant statements, and so left out (besides the tests' own connections): transaction control, migrations and their lock, the
 * isolation check, the readiness ping, the process-wide signing key, and the authority's circuit breaker and capacity. Statements
 * that look across companies (admin-only ones, the first step of a sweep, and the filing queue's reads of its lanes) must still
 * name company_id, and are listed by name; every other statement must filter by it (`company_id = …`).
 */
import assert from "node:assert/strict";
import { after } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { ACCOUNTS_SQL } from "../../src/store/core/sql-accounts.ts";
import { ERASURE_SQL } from "../../src/store/core/sql-erasure.ts";
import { EVENTS_SQL } from "../../src/store/core/sql-events.ts";
import { WEBHOOKS_SQL } from "../../src/store/core/sql-webhooks.ts";
import { WORK_ITEMS_SQL } from "../../src/store/core/sql-work-items.ts";
import { FILING_QUEUE_SQL } from "../../src/store/core/sql-filing-queue.ts";
import { OPERATOR_ACTIONS_SQL } from "../../src/store/core/sql-operator-actions.ts";
import { namesOfCompanies, OPERATOR_ITEMS_SQL } from "../../src/store/core/sql-operator-items.ts";
import { OPERATOR_READS_SQL } from "../../src/store/core/sql-operator-reads.ts";
import { postgresDialect } from "../../src/store/postgres/postgres-port.ts";
import { sqliteDialect } from "../../src/store/sqlite/sqlite-port.ts";
import type { Statement } from "../../src/store/port.ts";

const NOT_TENANT_DATA = [
  /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i,
  // …and the migrator's look for an index a CONCURRENTLY build left invalid (src/store/postgres/migrate.ts).
  /schema_migrations|schema_repeatables|pg_(?:try_)?advisory_(?:xact_)?(?:un)?lock|SHOW default_transaction_isolation|\bFROM pg_index\b/i,
  // The migrator's look for Citus, its mode for an upgrade of a distributed schema, and its
  // placement of the tables an upgrade made (src/store/postgres/distribution.ts).
  /^SELECT 1 FROM pg_extension WHERE extname = 'citus'$|^SET LOCAL citus\.|^SELECT current_schema\(\) AS schema$|\bpg_dist_partition\b|^SELECT relname FROM pg_class\b|^SELECT create_(?:distributed|reference)_table\(/,
  // The migrator's look for an index a killed CONCURRENTLY build left invalid (src/store/postgres/migrate.ts).
  /^SELECT i\.indisvalid AS valid FROM pg_index i\b/,
  /^\s*(CREATE|ALTER|DROP)\s/i,
  // The migrator's reads and additions of the kinds each `kind` column takes (src/store/kinds.ts).
  /\bpg_get_constraintdef\(|^SELECT name FROM sqlite_master WHERE type = 'table'$|^(?:SELECT kind FROM|INSERT INTO) work_item(?:_history)?_kinds\b/,
  /^SELECT 1;?$/,
  /signing_secrets/,
  // The circuit breaker guards the authority for every company at once (SPEC §10).
  /authority_breakers/,
  // So does the authority's capacity, shared by every worker process (SPEC §14): statements on
  // its two tables alone.
  /^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+(?:authority_capacity|authority_slots)\b/,
  /^\s*SELECT\b(?:(?!\bFROM\b)[\s\S])*\bFROM\s+(?:authority_capacity|authority_slots)\b(?:(?!\bJOIN\b|,)[\s\S])*$/,
  /^PRAGMA\b/i,
  // The store's size (`db status`, SPEC §22), read from PostgreSQL's catalog: no company's rows.
  /^SELECT pg_database_size\(current_database\(\)\) AS database_bytes\b/,
  // Operators, their credentials, paused work types, the last bot pass and the audit log belong
  // to the people who run the service, not to a company (SPEC §12); so does the record of an
  // erase under way (SPEC §22), kept until its audit entry.
  /^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+(?:operators|operator_tokens|operator_sessions|operator_identities|bot_pauses|bot_last_pass|audit_log|company_erasures)\b/,
  /^\s*SELECT\b(?:(?!\bFROM\b)[\s\S])*\bFROM\s+(?:operators|operator_tokens|operator_sessions|operator_identities|bot_pauses|bot_last_pass|audit_log|company_erasures)\b/,
  // The ids no row may get again (SQLite, migration 0023): one number per table, no company's.
  /^INSERT INTO retired_ids\b/,
  // The ids every item lies between, for the sample of the operators' list's estimate (core/operator-items.ts): two numbers, no tenant's data.
  /^SELECT \(SELECT MIN\(work_item_id\) FROM work_items\) AS lowest, \(SELECT MAX\(work_item_id\) FROM work_items\) AS highest$/,
  // The store's generation (migration 0017) is the whole store's, read and raised at start-up.
  /\bFROM store_generation\b(?:(?!\bJOIN\b)[\s\S])*$|^UPDATE store_generation SET\b/,
];

/** Allowed to look across companies; each still names company_id. */
const CROSS_COMPANY: Statement[] = [
  ACCOUNTS_SQL.nextCompanyId,
  ACCOUNTS_SQL.revokeApiKey,
  WEBHOOKS_SQL.companiesWithDueDeliveries,
  WEBHOOKS_SQL.pendingDeliveriesByCompany,
  WORK_ITEMS_SQL.companiesWithExpiredIdempotencyKeys,
  WEBHOOKS_SQL.companiesWithEndedDeliveries,
  EVENTS_SQL.companiesWithExpiredEvents,
  ERASURE_SQL.companiesWithExpiredItems,
  WEBHOOKS_SQL.plaintextWebhookSecrets,
  // The filing queue over every company (SPEC §14): which companies have bot work, and the
  // first lanes in queue order (a row per company with work, not per item); each claim after
  // them names its company.
  FILING_QUEUE_SQL.companiesWithBotWork,
  FILING_QUEUE_SQL.onTimeLanes,
  FILING_QUEUE_SQL.lateLanes,
  FILING_QUEUE_SQL.lanesWithoutDeadline,
  FILING_QUEUE_SQL.dueStatusLanes,
  // Operators see every company (SPEC §12.2).
  OPERATOR_READS_SQL.overviewCompanies,
  OPERATOR_READS_SQL.overviewCounts,
  OPERATOR_READS_SQL.overviewOpenBatchItems,
  OPERATOR_READS_SQL.overviewNewItems,
  OPERATOR_READS_SQL.overviewInProgressItems,
  OPERATOR_READS_SQL.overviewRecentFailures,
  OPERATOR_READS_SQL.overviewDeadlines,
  OPERATOR_READS_SQL.overviewSubmittedSince,
  OPERATOR_READS_SQL.overviewOverdue,
  OPERATOR_READS_SQL.activitySince,
  OPERATOR_READS_SQL.hourlyActivity,
  OPERATOR_READS_SQL.findWorkItem,
  OPERATOR_ACTIONS_SQL.findDeliveryCompany,
  OPERATOR_ITEMS_SQL.countedStatus,
  OPERATOR_ITEMS_SQL.companyNames,
  namesOfCompanies,
];

/**
 * The operator's pages and bulk retry across companies, one statement per combination of filters
 * (core/sql-operator-items.ts, core/operator-actions.ts, core/webhooks.ts): they name company_id, and
 * filter by it when asked to.
 */
const CROSS_COMPANY_PAGES = [
  /^SELECT work_item_id, company_id,[\s\S]* FROM (work_items|\(SELECT)[\s\S]*ORDER BY (work_item_id DESC|work_item_id|deadline_at, work_item_id) LIMIT \$1$/,
  /^SELECT COUNT\(\*\) AS items FROM \(SELECT company_id FROM work_items[\s\S]*LIMIT \$1\) capped$/,
  /^SELECT COALESCE\(SUM\(items\), 0\) AS items FROM \(SELECT COUNT\(company_id\) AS items FROM work_items[\s\S]*\) sampled$/,
  /^SELECT company_id, work_item_id, work_type FROM work_items\s+WHERE status = 'Failed'[\s\S]* LIMIT \$1$/,
  /^SELECT d\.company_id, [\s\S]* WHERE \$1 = 0[\s\S]* ORDER BY d\.delivery_id DESC, a\.attempt$/,
];

/**
 * PostgreSQL's group commit sends one call per group; every item in it carries its company_id
 * and each statement of the function (migrations/0001_initial.sql) is scoped by it. A bulk add's
 * call names its company first (`$1`), and each statement of its function (migrations/0008) is
 * scoped by that.
 */
const GROUP_COMMIT_CALL = /FROM wia_add_work_items\(\$1::json, \$2::text\[\]\)|FROM wia_add_work_item_bulk\(\$1::bigint, /;

const textsOf = (statement: Statement) =>
  typeof statement.text === "string" ? [statement.text] : [statement.text(sqliteDialect), statement.text(postgresDialect)];
const crossCompany = new Set(CROSS_COMPANY.flatMap(textsOf));

const STORE_APPLICATION_NAME = "work-item-api";
const recorded = new Set<string>();
let installed = false;

/** Starts recording in this test file's process, and checks what was recorded when it ends. */
export function recordStoreStatements(): Set<string> {
  if (!installed) {
    installed = true;
    const prepare = Database.prototype.prepare;
    // The tests' own read-only connections (countRows) are not the store's.
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      if (!this.readonly) recorded.add(source);
      return prepare.call(this, source);
    } as typeof prepare;
    const exec = Database.prototype.exec;
    Database.prototype.exec = function (this: Database.Database, source: string) {
      if (!this.readonly) recorded.add(source);
      return exec.call(this, source);
    } as typeof exec;
    const query = pg.Client.prototype.query;
    // Only the store's connections (named by its pool), not the tests' own schema handling.
    pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === "string" ? first : (first as { text?: unknown } | null)?.text;
      if (typeof text === "string" && this.connectionParameters?.application_name === STORE_APPLICATION_NAME) recorded.add(text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    after(() => {
      assertScopedByCompany(recorded);
      assertRowLocksAreWrites(recorded);
    });
  }
  return recorded;
}

export function assertScopedByCompany(statements: Iterable<string>): void {
  const unscoped: string[] = [];
  let checked = 0;
  for (const recordedText of statements) {
    const text = recordedText.replace(/^\s*--.*$/gm, "").trim();
    if (NOT_TENANT_DATA.some((pattern) => pattern.test(text)) || GROUP_COMMIT_CALL.test(text)) continue;
    checked += 1;
    const names = /\bcompany_id\b/.test(text);
    const filters = /\bcompany_id\s*=\s*(\$\d|\?|:company_id)/.test(text) || /^INSERT INTO \w+ \(company_id\b/.test(text);
    if (!names || (!filters && !crossCompany.has(recordedText) && !CROSS_COMPANY_PAGES.some((page) => page.test(text)))) unscoped.push(text.replace(/\s+/g, " ").slice(0, 200));
  }
  assert.ok(checked > 0, "no tenant statement was recorded");
  assert.deepEqual(unscoped, [], "statements that are not scoped by company_id");
}

const ROW_LOCK = /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b/i;
const WRITE = /^\s*(?:UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b|^\s*WITH\b[\s\S]*\)\s*(?:UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/i;

/**
 * A row lock on tenant data is taken by a write (an UPDATE that changes nothing, or the CTE of a
 * write), never by SELECT … FOR UPDATE or FOR SHARE alone: Citus holds only writes back for a
 * shard move's cut-over, so a lock taken by a read can be held on the old placement while another
 * transaction writes the row on the new one (docs/scaling.md §3.7).
 */
export function assertRowLocksAreWrites(statements: Iterable<string>): void {
  const byRead = [...statements]
    .map((recordedText) => recordedText.replace(/^\s*--.*$/gm, "").trim())
    .filter((text) => ROW_LOCK.test(text) && !WRITE.test(text) && !NOT_TENANT_DATA.some((pattern) => pattern.test(text)));
  assert.deepEqual(byRead.map((text) => text.replace(/\s+/g, " ").slice(0, 200)), [], "row locks on tenant data taken by a read");
}
