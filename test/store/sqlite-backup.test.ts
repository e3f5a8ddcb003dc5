/**
 * `db backup FILE` of the embedded store (SPEC §18), black box: a real server taking adds over
 * HTTP while the CLI copies its store. The copy holds every add answered before the backup
 * began, passes its check, and is what the CLI says; bad targets are one-line refusals that
 * leave nothing behind (a symlink is refused, never followed); the copy, the store and its WAL are
 * the service's user's alone (0600); PostgreSQL is pointed at its own tools.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import Database from "better-sqlite3";
import { availableBackends, sqliteBackend } from "../helpers/backends.ts";
import { bearerTokenFrom, createKeyWithCli, runCli, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

const modeOf = (path: string) => statSync(path).mode & 0o777;

test("db backup copies the store while it takes adds: every add answered before is in the checked copy", { timeout: HANG_TIMEOUT_MS }, async () => {
  const db = await sqliteBackend.create();
  const folder = mkdtempSync(join(tmpdir(), "wia-backup-"));
  try {
    const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, RATE_LIMIT_TENANT_RPS: "0" };
    const key = await createKeyWithCli(db.databaseUrl, 1801);
    const server = await startServer(env);
    const bearerToken = await bearerTokenFrom(server.baseUrl, key);
    const answered: number[] = [];
    let adding = true;
    let sequence = 0;
    const addOne = async () => {
      const response = await fetch(`${server.baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" },
        body: JSON.stringify(validWorkItem({ customerReference: `backup-${sequence++}` })),
      });
      assert.equal(response.status, 200, await response.clone().text());
      answered.push(((await response.json()) as { workItemId: number }).workItemId);
    };
    for (let i = 0; i < 200; i++) await addOne();
    // Four clients keep adding through the backup.
    const adders = Array.from({ length: 4 }, async () => {
      while (adding) await addOne();
    });
    const answeredBefore = [...answered];
    const file = join(folder, "copy.db");
    const backup = await runCli(["db", "backup", file, "--json"], env);
    adding = false;
    await Promise.all(adders);
    assert.equal(backup.code, 0, backup.stderr);
    const result = backup.json<{ file: string; bytes: number; workItems: number; takenAt: string }>();
    assert.equal(result.file, file);
    assert.ok(result.bytes > 0 && Number.isFinite(Date.parse(result.takenAt)));
    // The copy, the store and its WAL hold every company's data: the service's user alone reads them (SPEC §24).
    const store = (db.location as { path: string }).path;
    for (const path of [file, store, `${store}-wal`]) assert.equal(modeOf(path), 0o600, `${path} is 0600`);
    assert.equal(modeOf(dirname(store)), 0o700, "the data folder the service made is 0700");
    assert.deepEqual(readdirSync(folder), ["copy.db"], "no temporary file is left beside the copy");

    const copy = new Database(file, { readonly: true });
    try {
      assert.equal(copy.pragma("integrity_check", { simple: true }), "ok");
      const ids = new Set((copy.prepare("SELECT work_item_id FROM work_items").all() as Array<{ work_item_id: number }>).map((row) => row.work_item_id));
      assert.equal(ids.size, result.workItems, "the count it printed is the copy's");
      assert.deepEqual(answeredBefore.filter((id) => !ids.has(id)), [], "every add answered before the backup began is in the copy");
      assert.ok(result.workItems <= answered.length);
    } finally {
      copy.close();
    }
    await server.stop();

    // Bad targets: a one-line refusal, exit 1, nothing written, the store untouched.
    const existing = join(folder, "existing.db");
    writeFileSync(existing, "keep me");
    const dangling = join(folder, "dangling.db");
    symlinkSync(join(folder, "created-through-the-link.db"), dangling);
    const linked = join(folder, "linked.db");
    symlinkSync(existing, linked);
    const cases: Array<[string, RegExp]> = [
      [existing, /exists already/],
      [join(folder, "no-such-folder", "copy.db"), /does not exist/],
      [dangling, /is a symbolic link/],
      [linked, /is a symbolic link/],
    ];
    for (const [target, message] of cases) {
      const refused = await runCli(["db", "backup", target], env);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, message);
      assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
    }
    assert.ok(!existsSync(join(folder, "no-such-folder")));
    assert.ok(!existsSync(join(folder, "created-through-the-link.db")), "a dangling link is not followed");
    assert.equal(readFileSync(existing, "utf8"), "keep me");
    const missingFile = await runCli(["db", "backup"], env);
    assert.equal(missingFile.code, 2, "no file named: usage");
    const noStore = await runCli(["db", "backup", join(folder, "other.db")], { ...env, DATABASE_URL: `sqlite:${join(folder, "missing", "store.db")}` });
    assert.equal(noStore.code, 1);
    assert.match(noStore.stderr, /there is no store at/);
    assert.ok(!existsSync(join(folder, "missing")), "a missing store is not created by asking for its backup");
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await db.cleanup();
  }
});

test("db backup on PostgreSQL points at PostgreSQL's own backups, changing nothing", { timeout: HANG_TIMEOUT_MS }, async (t) => {
  const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");
  if (!postgres) return t.skip("no PostgreSQL here");
  const db = await postgres.create();
  try {
    const refused = await runCli(["db", "backup", join(tmpdir(), "never-written.db"), "--json"], { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /pg_dump/);
    assert.ok(!existsSync(join(tmpdir(), "never-written.db")));
  } finally {
    await db.cleanup();
  }
});
