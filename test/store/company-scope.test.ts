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
import { SQL } from "../../src/store/core/sql.ts";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.ts";
import { prepareIntakeStatements } from "../../src/store/sqlite/intake-statements.ts";
import { sqliteDialect } from "../../src/store/sqlite/sqlite-port.ts";
import { assertScopedByCompany, recordStoreStatements } from "../helpers/statement-recorder.ts";

test("the check refuses a statement without company_id, and one that names it without filtering by it", () => {
  assert.throws(() => assertScopedByCompany(["SELECT * FROM work_items WHERE work_item_id = $1"]), /not scoped by company_id/);
  assert.throws(() => assertScopedByCompany(["SELECT company_id FROM work_items WHERE work_item_id = $1"]), /not scoped by company_id/);
  assert.doesNotThrow(() => assertScopedByCompany(["SELECT status FROM work_items WHERE company_id = $1 AND work_item_id = $2"]));
});

test("cross-company statements are allowed only by name", () => {
  const discovery = SQL.companiesWithBotWork.text as string;
  assert.doesNotThrow(() => assertScopedByCompany([discovery]));
  assert.throws(() => assertScopedByCompany([`${discovery} `]), /not scoped by company_id/);
  const claim = SQL.claimBatch.text as (d: typeof sqliteDialect) => string;
  assert.doesNotThrow(() => assertScopedByCompany([claim(sqliteDialect)]));
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
