/**
 * `db restore FILE` of the embedded store (SPEC §18), black box with real processes and the
 * simulated authority:
 * - refused, changing nothing, while a process uses the store, and for a copy that fails its check;
 * - otherwise the copy is put in place and the replaced store kept beside it;
 * - a service started on the restored copy files what the copy shows as not yet filed, and the
 *   authority sees no second application (the same idempotency key);
 * - the trap: items added after the restore get the ids of items lost with it, and are filed as
 *   themselves, not answered with the lost items' applications.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { sqliteBackend, queryRows } from "../helpers/backends.ts";
import { fileEverything, signIn } from "../helpers/filing-by-process.ts";
import { createKeyWithCli, runCli, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

const COMPANY = 1901;
const fingerprint = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

test("db restore: refused while the store is in use or for a bad copy; otherwise in place, filed once, and new items filed as themselves", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, latencyMs: 0, decisionDelayMs: 0 });
  const db = await sqliteBackend.create();
  if (db.location.kind !== "sqlite") throw new Error("a SQLite location");
  const store = db.location.path;
  const folder = mkdtempSync(join(tmpdir(), "wia-restore-"));
  try {
    const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, AUTHORITY_URL: sim.url, RATE_LIMIT_TENANT_RPS: "0" };
    const key = await createKeyWithCli(db.databaseUrl, COMPANY);
    let api = await startServer({ ...env, ROLE: "api" });
    let add = await signIn(api.baseUrl, key);
    const inCopy = [await add("r-1"), await add("r-2"), await add("r-3"), await add("r-4"), await add("r-5")];
    const backupFile = join(folder, "copy.db");
    const backup = await runCli(["db", "backup", backupFile, "--json"], env);
    assert.equal(backup.code, 0, backup.stderr);
    const lost = [await add("lost-6"), await add("lost-7"), await add("lost-8")];

    // While the API process has the store open, even idle, the restore is refused and changes nothing.
    const before = fingerprint(store);
    const whileRunning = await runCli(["db", "restore", backupFile], env);
    assert.equal(whileRunning.code, 1, whileRunning.stderr);
    assert.match(whileRunning.stderr, /in use by a running process/);
    assert.equal(whileRunning.stderr.trim().split("\n").length, 1, whileRunning.stderr);
    assert.equal(fingerprint(store), before, "the store is untouched");
    assert.ok(!existsSync(`${store}.restoring`));

    // Everything is filed, the items the restore will lose included.
    const firstLife = await fileEverything(env, store, 8);
    await api.stop();
    const lostApplications = lost.map((id) => firstLife.get(id)!.applicationNumber);
    assert.ok(lostApplications.every((number) => number !== null));

    // Bad copies: one line, exit 1, nothing changed.
    const notSqlite = join(folder, "notes.txt");
    writeFileSync(notSqlite, "not a database at all, just some text that is long enough to have a header of its own....");
    const foreign = join(folder, "foreign.db");
    new Database(foreign).exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')").close();
    const truncated = join(folder, "truncated.db");
    copyFileSync(backupFile, truncated);
    truncateSync(truncated, 8192);
    const settled = fingerprint(store);
    const refusals: Array<[string, RegExp]> = [
      [join(folder, "missing.db"), /there is no file at/],
      [notSqlite, /failed its check/],
      [foreign, /not a Work-Item API store/],
      [truncated, /failed its check/],
      [store, /the store itself/],
    ];
    for (const [file, message] of refusals) {
      const refused = await runCli(["db", "restore", file], env);
      assert.equal(refused.code, 1, `${file}: ${refused.stderr}`);
      assert.match(refused.stderr, message);
      assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
      assert.equal(fingerprint(store), settled, `${file}: the store is untouched`);
    }
    const usage = await runCli(["db", "restore", "--json"], env);
    assert.equal(usage.code, 2);

    // The restore itself.
    const restored = await runCli(["db", "restore", backupFile, "--json"], env);
    assert.equal(restored.code, 0, restored.stderr);
    const result = restored.json<{ file: string; restoredFrom: string; replaced: string; workItems: number; generation: number; generationId: string }>();
    assert.equal(result.file, store);
    assert.equal(result.workItems, 5);
    assert.equal(result.generation, 1);
    assert.match(result.generationId, /^[0-9a-f]{16}$/);
    assert.ok(existsSync(result.replaced), "the replaced store is kept beside it");
    const kept = await queryRows<{ n: number }>({ kind: "sqlite", path: result.replaced }, "SELECT count(*) AS n FROM work_items");
    assert.equal(Number(kept[0]!.n), 8, "the kept store is the one that was replaced");
    assert.ok(existsSync(backupFile), "the backup itself is left as it was");

    // A service on the restored copy: the copy's items are filed again under their keys (replays),
    // and new items reuse the lost items' ids.
    api = await startServer({ ...env, ROLE: "api" });
    add = await signIn(api.baseUrl, key);
    const afterRestore = [await add("new-6"), await add("new-7"), await add("new-8")];
    assert.deepEqual(afterRestore, lost, "the id sequence went back: the trap is set");
    const secondLife = await fileEverything(env, store, 8);
    await api.stop();

    const stats = sim.stats();
    for (const id of inCopy) {
      assert.equal(secondLife.get(id)!.applicationNumber, firstLife.get(id)!.applicationNumber, `item ${id}: the same application`);
      assert.equal(secondLife.get(id)!.idempotencyKey, firstLife.get(id)!.idempotencyKey, `item ${id}: the same key`);
      assert.equal(stats.keys[secondLife.get(id)!.idempotencyKey]!.submits, 2, `item ${id} was submitted again after the restore, under its key`);
    }
    for (const [index, id] of afterRestore.entries()) {
      const { applicationNumber, idempotencyKey } = secondLife.get(id)!;
      assert.notEqual(applicationNumber, lostApplications[index], `item ${id} added after the restore is filed as itself, not as the lost item`);
      assert.equal(idempotencyKey, `${id}-${result.generationId}`);
      assert.equal(stats.keys[idempotencyKey]!.applicationNumber, applicationNumber);
    }
    assert.equal(stats.registrations, 11, "eight before the restore, three new ones after; none twice");
  } finally {
    await stopAll();
    await sim.close();
    rmSync(folder, { recursive: true, force: true });
    await db.cleanup();
  }
});
