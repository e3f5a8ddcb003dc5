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
import { bearerTokenFrom, createKeyWithCli, runCli, startServer, stopAll, type Env } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

const COMPANY = 1901;
const fingerprint = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

async function signIn(baseUrl: string, key: { apiKey: string; secret: string }): Promise<(reference: string) => Promise<number>> {
  const bearerToken = await bearerTokenFrom(baseUrl, key);
  return async (reference) => {
    const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" },
      body: JSON.stringify(validWorkItem({ customerReference: reference })),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return ((await response.json()) as { workItemId: number }).workItemId;
  };
}

type Filed = { work_item_id: number; status: string; application_number: string | null };

/** Runs a worker until every item of the store is Successful; returns the items, by id. */
async function fileEverything(env: Env, path: string, expected: number): Promise<Map<number, Filed>> {
  const worker = await startServer({ ...env, ROLE: "worker", BOT_SCHEDULE: "* * * * * *" });
  const rows = await waitUntil(
    `all ${expected} items to be registered`,
    async () => {
      const items = await queryRows<Filed>({ kind: "sqlite", path }, "SELECT work_item_id, status, application_number FROM work_items");
      return items.length === expected && items.every((item) => item.status === "Successful") ? items : undefined;
    },
    undefined,
    200,
  );
  assert.equal((await worker.stop()).code, 0);
  return new Map(rows.map((row) => [Number(row.work_item_id), row]));
}

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
    const lostApplications = lost.map((id) => firstLife.get(id)!.application_number);
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
    const result = restored.json<{ file: string; restoredFrom: string; replaced: string; workItems: number; generation: number }>();
    assert.equal(result.file, store);
    assert.equal(result.workItems, 5);
    assert.equal(result.generation, 1);
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
      assert.equal(secondLife.get(id)!.application_number, firstLife.get(id)!.application_number, `item ${id}: the same application`);
      assert.equal(stats.keys[String(id)]!.submits, 2, `item ${id} was submitted again after the restore, under its key`);
    }
    for (const [index, id] of afterRestore.entries()) {
      const application = secondLife.get(id)!.application_number;
      assert.notEqual(application, lostApplications[index], `item ${id} added after the restore is filed as itself, not as the lost item`);
      assert.equal(stats.keys[`${id}-g1`]!.applicationNumber, application);
    }
    assert.equal(stats.registrations, 11, "eight before the restore, three new ones after; none twice");
  } finally {
    await stopAll();
    await sim.close();
    rmSync(folder, { recursive: true, force: true });
    await db.cleanup();
  }
});
