/**
 * The check behind recordStoreStatements (test/helpers/statement-recorder.ts), which the store
 * contract and lifecycle suites run on both backends: it refuses what it must refuse, and it
 * also covers the SQLite intake statements, which run on the writer thread where the suites'
 * recorder cannot see them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import Database from "better-sqlite3";
import { CAPACITY_SQL } from "../../src/store/core/sql-capacity.ts";
import { FILING_QUEUE_SQL } from "../../src/store/core/sql-filing-queue.ts";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import { prepareIntakeStatements } from "../../src/store/sqlite/intake-statements.ts";
import { postgresDialect } from "../../src/store/postgres/postgres-port.ts";
import { sqliteDialect } from "../../src/store/sqlite/sqlite-port.ts";
import { assertRowLocksAreWrites, assertScopedByCompany, recordStoreStatements } from "../helpers/statement-recorder.ts";

test("the check refuses a statement without company_id, and one that names it without filtering by it", () => {
  assert.throws(() => assertScopedByCompany(["SELECT * FROM work_items WHERE work_item_id = $1"]), /not scoped by company_id/);
  assert.throws(() => assertScopedByCompany(["SELECT company_id FROM work_items WHERE work_item_id = $1"]), /not scoped by company_id/);
  assert.doesNotThrow(() => assertScopedByCompany(["SELECT status FROM work_items WHERE company_id = $1 AND work_item_id = $2"]));
});

test("cross-company statements are allowed only by name", () => {
  const discovery = FILING_QUEUE_SQL.companiesWithBotWork.text as string;
  assert.doesNotThrow(() => assertScopedByCompany([discovery]));
  assert.throws(() => assertScopedByCompany([`${discovery} `]), /not scoped by company_id/);
  // The filing queue's first lanes, over every company; the claims from them name their company.
  const lanes = FILING_QUEUE_SQL.onTimeLanes.text as string;
  assert.doesNotThrow(() => assertScopedByCompany([lanes, FILING_QUEUE_SQL.lateLanes.text as string, FILING_QUEUE_SQL.dueStatusLanes.text as string]));
  assert.throws(() => assertScopedByCompany([lanes.replace("LIMIT $4", "LIMIT 10")]), /not scoped by company_id/);
  const claim = FILING_QUEUE_SQL.claimLane.text as (d: typeof sqliteDialect) => string;
  assert.doesNotThrow(() => assertScopedByCompany([claim(sqliteDialect), claim(postgresDialect)]));
});

test("a row lock on tenant data is taken by a write; the check refuses one taken by a read", () => {
  assert.throws(() => assertRowLocksAreWrites(["SELECT status FROM work_items WHERE company_id = $1 AND work_item_id = $2 FOR UPDATE"]), /taken by a read/);
  assert.throws(() => assertRowLocksAreWrites(["SELECT status FROM work_batches WHERE company_id = $1 FOR SHARE"]), /taken by a read/);
  const hold = FILING_QUEUE_SQL.tryHoldFilingLane.text as (d: typeof postgresDialect) => string;
  assert.doesNotThrow(() =>
    assertRowLocksAreWrites([
      hold(postgresDialect),
      (FILING_QUEUE_SQL.holdClosedBatches.text as (d: typeof postgresDialect) => string)(postgresDialect),
      // The authority's capacity is on the coordinator alone: its lock never moves.
      (CAPACITY_SQL.lockCapacity.text as (d: typeof postgresDialect) => string)(postgresDialect),
    ]),
  );
});

test("the authority's capacity is not tenant data, but only statements on its own tables are let through as such", () => {
  const capacity = Object.values(CAPACITY_SQL);
  const texts = capacity.flatMap((s) => (typeof s.text === "string" ? [s.text] : [s.text(sqliteDialect), s.text(postgresDialect)]));
  assert.ok(texts.every((text) => !/\bcompany_id\b/.test(text)), "none of them names a company");
  // Alone they would fail the check ("no tenant statement was recorded"); with a scoped one they pass.
  assert.doesNotThrow(() => assertScopedByCompany([...texts, "SELECT status FROM work_items WHERE company_id = $1"]));
  assert.throws(() => assertScopedByCompany(texts), /no tenant statement was recorded/);
  assert.throws(() => assertScopedByCompany(["SELECT s.holder FROM authority_slots s JOIN work_items i ON i.claimed_by = s.holder"]), /not scoped by company_id/);
  assert.throws(() => assertScopedByCompany(["SELECT s.holder FROM authority_slots s, work_items i WHERE i.claimed_by = s.holder"]), /not scoped by company_id/);
  assert.throws(() => assertScopedByCompany(["UPDATE work_items SET claimed_by = NULL WHERE claimed_by IN (SELECT holder FROM authority_slots)"]), /not scoped by company_id/);
});

test("the SQLite intake statements (on the writer thread) are scoped by company", async () => {
  const recorded = recordStoreStatements();
  const dir = mkdtempSync(join(tmpdir(), "wia-scope-"));
  try {
    const path = join(dir, "data", "work-item-api.db");
    await openSqliteStore(path).close();
    recorded.clear();
    const db = new Database(path);
    prepareIntakeStatements(db);
    db.close();
    assert.ok(recorded.size >= 8, `recorded ${recorded.size} intake statements`);
    assertScopedByCompany(recorded);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
