/**
 * Space comes back (SPEC §22). On a real SQLite file: a store is made in incremental auto-vacuum
 * mode, and an erase and the item sweep hand the pages they free back as they go, so the store's
 * pages go down with its rows and the file shrinks; `db status` prints the size, the free pages
 * and the file's size. A store made before that mode keeps its free pages until `db vacuum`
 * switches it, which waits until no process has the store open. On PostgreSQL, whose autovacuum
 * does this itself, `db status` prints the database's and the schema's size, and `db vacuum`
 * says there is nothing to do.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import { eraseCompany } from "../../src/admin/company-erasure.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { FREE_PAGES_PER_STEP } from "../../src/retention/after-erasing-step.ts";
import { sweepExpiredItems } from "../../src/retention/item-sweep.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { StorageSize, Store } from "../../src/store/store.ts";
import type { VacuumResult } from "../../src/store/sqlite/vacuum-store.ts";
import { availableBackends, openFreshStore, sqliteBackend } from "../helpers/backends.ts";
import { runCli, stopAll } from "../helpers/processes.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

recordStoreStatements();
after(() => stopAll());

const action = { operator: { operatorId: "cli", email: "cli" }, reason: "space test", at: new Date().toISOString() };

type FileSize = Extract<StorageSize, { kind: "sqlite" }>;

/** Two companies of `items` items each, with text enough to fill pages. */
async function fill(store: Store, items: number): Promise<void> {
  for (const companyId of [7, 8]) {
    await store.createCompany({ companyId, name: `c${companyId}` });
    for (let done = 0; done < items; done += 1000) {
      const batch = Array.from({ length: Math.min(1000, items - done) }, (_, i) => ({
        customerReference: `R-${companyId}-${done + i}`,
        documentReference: null,
        webhookUrl: null,
        request: validWorkItem({ customerReference: `R-${companyId}-${done + i}`, productName: { sendValue: "X".repeat(400), documentValue: "Y".repeat(400) } }),
      }));
      assert.equal((await store.addWorkItems({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: 1000, items: batch })).kind, "created");
    }
  }
}

const fileSize = async (store: Store): Promise<FileSize> => {
  const size = await store.storageSize();
  assert.equal(size.kind, "sqlite");
  return size as FileSize;
};

const status = (databaseUrl: string, ...flags: string[]) => runCli(["db", "status", ...flags], { DATABASE_URL: databaseUrl });

describe("space comes back [sqlite]", { timeout: HANG_TIMEOUT_MS }, () => {
  test("an erase hands the pages it frees back as it goes; the file shrinks, and db status shows it", async () => {
    const { store, location, databaseUrl, cleanup } = await openFreshStore(sqliteBackend);
    try {
      await fill(store, 3000);
      const before = await fileSize(store);
      assert.equal(before.autoVacuum, "incremental", "a new store is made in incremental mode");
      assert.equal(before.bytes, before.pages * before.pageSize);

      assert.equal((await eraseCompany(store, 7, action)).kind, "erased");
      const after = await fileSize(store);
      assert.ok(after.pages < before.pages * 0.75, `half the items erased: ${before.pages} pages before, ${after.pages} after`);
      assert.ok(after.freePages < FREE_PAGES_PER_STEP, `free pages handed back as the erase went: ${after.freePages} left`);
      await store.close();

      const printed = await status(databaseUrl);
      assert.equal(printed.code, 0, printed.stderr);
      assert.match(printed.stdout, /^size: [\d.,]+ MB \([\d,]+ pages of \d+ bytes\), free [\d.,]+ MB \([\d,]+ pages\), file [\d.,]+ MB \([\d,]+ bytes\)$/m);
      assert.match(printed.stdout, /^auto_vacuum incremental: /m);
      const { storage } = (await status(databaseUrl, "--json")).json<{ storage: FileSize }>();
      assert.equal(storage.pages, after.pages, "db status reads what the store holds");
      assert.ok(storage.fileBytes < before.fileBytes * 0.75, `the file shrank once its WAL was written back: ${before.fileBytes} → ${storage.fileBytes} bytes`);
      assert.equal(location.kind, "sqlite");
    } finally {
      await cleanup();
    }
  });

  test("the item sweep hands the pages it frees back as it goes", async () => {
    const { store, cleanup } = await openFreshStore(sqliteBackend);
    try {
      await fill(store, 3000);
      // Cancelling company 7's New items (the erase's own step) finishes them all at once.
      await store.stopCompanyWork(7, { now: new Date().toISOString(), limit: 10_000 });
      const before = await fileSize(store);
      const erased = await sweepExpiredItems(store, { now: new Date(Date.now() + 2 * 86_400_000), retentionDays: 1, maxRows: 10_000 });
      assert.equal(erased, 3000);
      const after = await fileSize(store);
      assert.ok(after.pages < before.pages * 0.75, `${before.pages} pages before, ${after.pages} after`);
      assert.ok(after.freePages < FREE_PAGES_PER_STEP, `${after.freePages} free pages left`);
    } finally {
      await cleanup();
    }
  });

  test("a store made before incremental mode keeps its free pages until db vacuum switches it, with the store to itself", async () => {
    const created = await sqliteBackend.create();
    assert.equal(created.location.kind, "sqlite");
    const path = created.location.kind === "sqlite" ? created.location.path : "";
    // As an earlier release made it: WAL first, which fixes the mode at none.
    mkdirSync(dirname(path), { recursive: true });
    const older = new Database(path);
    older.pragma("journal_mode = WAL");
    older.close();
    let store = await openStore(created.location);
    try {
      await fill(store, 2000);
      assert.equal((await fileSize(store)).autoVacuum, "none");
      assert.equal((await eraseCompany(store, 7, action)).kind, "erased");
      const kept = await fileSize(store);
      assert.ok(kept.freePages > kept.pages / 4, `the erased rows' pages stay free in the file: ${kept.freePages} of ${kept.pages}`);
      assert.equal(await store.returnFreePages({ atLeast: 1, atMost: 1000 }), 0, "nothing handed back in mode none");
      assert.match((await status(created.databaseUrl)).stdout, /^auto_vacuum none: .*run db vacuum once, with the service stopped/m);

      const refused = await runCli(["db", "vacuum"], { DATABASE_URL: created.databaseUrl });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /in use by a running process.*Nothing was changed\.$/m);
      assert.equal((await fileSize(store)).freePages, kept.freePages, "nothing changed");

      await store.close();
      const vacuum = await runCli(["db", "vacuum", "--json"], { DATABASE_URL: created.databaseUrl });
      assert.equal(vacuum.code, 0, vacuum.stderr);
      const result = vacuum.json<VacuumResult>();
      assert.deepEqual([result.autoVacuumBefore, result.rewritten, result.after.autoVacuum, result.after.freePages], ["none", true, "incremental", 0]);
      assert.ok(result.after.fileBytes < result.before.fileBytes * 0.75, `${result.before.fileBytes} → ${result.after.fileBytes} bytes`);

      store = await openStore(created.location);
      assert.equal((await fileSize(store)).autoVacuum, "incremental", "and it stays so");
      const again = await runCli(["db", "vacuum"], { DATABASE_URL: created.databaseUrl });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /^Handed 0 free pages back in /m, "beside a running store, once switched");
    } finally {
      await store.close();
      await created.cleanup();
    }
  });
});

for (const backend of (await availableBackends()).filter((b) => b.name === "postgres")) {
  describe("the store's size [postgres]", { timeout: HANG_TIMEOUT_MS }, () => {
    test("db status prints the database's and the schema's size; db vacuum has nothing to do", async () => {
      const { store, databaseUrl, cleanup } = await openFreshStore(backend);
      try {
        const empty = await store.storageSize();
        assert.equal(empty.kind, "postgres");
        await fill(store, 2000);
        const full = await store.storageSize();
        assert.ok(full.kind === "postgres" && empty.kind === "postgres" && full.schemaBytes > empty.schemaBytes, "the schema grows with its rows");
        assert.ok(full.kind === "postgres" && full.databaseBytes >= full.schemaBytes && /^wia_test_/.test(full.schema));
        assert.equal(await store.returnFreePages({ atLeast: 1, atMost: 1000 }), 0, "autovacuum's work");

        const printed = await status(databaseUrl);
        assert.equal(printed.code, 0, printed.stderr);
        assert.match(printed.stdout, /^size: database [\d.,]+ MB \([\d,]+ bytes\), schema wia_test_\w+ [\d.,]+ MB \([\d,]+ bytes, tables with their indexes\); autovacuum /m);
        assert.equal((await status(databaseUrl, "--json")).json<{ storage: StorageSize }>().storage.kind, "postgres");
        const vacuum = await runCli(["db", "vacuum"], { DATABASE_URL: databaseUrl });
        assert.equal(vacuum.code, 1);
        assert.match(vacuum.stderr, /autovacuum makes erased rows' space reusable on its own.*Nothing was changed\.$/m);
      } finally {
        await cleanup();
      }
    });
  });
}
