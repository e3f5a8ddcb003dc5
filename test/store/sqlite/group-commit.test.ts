/**
 * The SQLite group commit, over real HTTP on loopback against a real database file: concurrent
 * adds are coalesced into shared commits, and whatever fails inside a shared commit, no request
 * is ever answered 200 for an item that is not stored. Failures are provoked in the database
 * itself (a trigger that rejects one item; a deferred foreign key that makes the COMMIT fail).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import { createKey } from "../../../src/admin/admin.ts";
import { buildApp } from "../../../src/app.ts";
import { loadConfig } from "../../../src/config.ts";
import type { SqliteStore } from "../../../src/store/sqlite/sqlite-store.ts";
import { countRows, openFreshStore, sqliteBackend } from "../../helpers/backends.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../../helpers/test-app.ts";

interface Answer {
  reference: string;
  status: number;
  body: { workItemId?: number; workBatchId?: number; status?: number };
  retryAfter: string | null;
}

describe("SQLite group commit over HTTP", () => {
  let store: SqliteStore;
  let baseUrl: string;
  let token: string;
  let close: () => Promise<void>;
  const companyId = 77;

  before(async () => {
    const fresh = await openFreshStore(sqliteBackend);
    store = fresh.store as SqliteStore;
    const config = loadConfig({ DATABASE_URL: fresh.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: "silent", RATE_LIMIT_TENANT_RPS: "0", BATCH_MAX_ITEMS: "300" });
    const app = await buildApp(config, { store });
    await app.listen({ port: 0, host: "127.0.0.1" });
    const address = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
    const key = await createKey(store, { companyId });
    const login = await fetch(`${baseUrl}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
    token = ((await login.json()) as { bearerToken: string }).bearerToken;
    close = async () => {
      await app.close();
      await fresh.cleanup();
    };
  });
  after(() => close());

  /** Sends every reference at once and collects the answers. */
  async function burst(references: string[]): Promise<Answer[]> {
    return Promise.all(
      references.map(async (reference) => {
        const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify(validWorkItem({ customerReference: reference })),
        });
        return { reference, status: response.status, body: (await response.json()) as Answer["body"], retryAfter: response.headers.get("retry-after") };
      }),
    );
  }

  /** Every 200 is stored as answered; every other answer left nothing behind. */
  async function assertAnswersMatchStore(answers: Answer[]): Promise<void> {
    for (const answer of answers) {
      const stored = await store.listWorkItems(companyId, { customerReference: answer.reference, limit: 2 });
      if (answer.status === 200) {
        assert.equal(stored.length, 1, `${answer.reference} was answered 200 and must be stored once`);
        assert.equal(stored[0]!.workItemId, answer.body.workItemId);
        assert.equal(stored[0]!.workBatchId, answer.body.workBatchId);
      } else {
        assert.equal(stored.length, 0, `${answer.reference} was answered ${answer.status} and must not be stored`);
      }
    }
  }

  /** Runs the database's own SQL next to the store (the same file, another connection). */
  function onDatabase(sql: string): void {
    const db = new Database(store.path);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  }

  test("1,000 concurrent adds give 1,000 distinct ids, all stored, in shared commits", async () => {
    const groupsBefore = store.intake.stats.groups;
    const answers = await burst(Array.from({ length: 1000 }, (_, i) => `burst-${i}`));
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const ids = answers.map((a) => a.body.workItemId!);
    assert.equal(new Set(ids).size, 1000, "1,000 distinct item ids");
    assert.equal((await countRows({ kind: "sqlite", path: store.path })).workItems, 1000);
    await assertAnswersMatchStore(answers);
    const groups = store.intake.stats.groups - groupsBefore;
    assert.ok(groups < 1000, `adds were coalesced: ${groups} commits for 1,000 items`);
    // Batches rolled over at 300 items across group boundaries, with exact counts and one Open batch.
    const perBatch = new Map<number, number>();
    for (const answer of answers) perBatch.set(answer.body.workBatchId!, (perBatch.get(answer.body.workBatchId!) ?? 0) + 1);
    const batches = await Promise.all([...perBatch.keys()].map((id) => store.getWorkBatch(companyId, id)));
    assert.deepEqual(batches.map((b) => b!.counts.new).sort((a, b) => a - b), [...perBatch.values()].sort((a, b) => a - b));
    assert.deepEqual(batches.map((b) => b!.status).sort(), ["Closed", "Closed", "Closed", "Open"]);
    assert.ok(batches.filter((b) => b!.status === "Closed").every((b) => b!.counts.new === 300));
  });

  test("an item the database rejects fails alone; the rest of its commit is stored", async () => {
    onDatabase(`CREATE TRIGGER reject_poison BEFORE INSERT ON work_items WHEN NEW.customer_reference LIKE 'poison-%'
                BEGIN SELECT RAISE(ABORT, 'poisoned item'); END;`);
    try {
      const references = Array.from({ length: 300 }, (_, i) => (i % 10 === 3 ? `poison-${i}` : `mixed-${i}`));
      const groupsBefore = store.intake.stats.groups;
      const answers = await burst(references);
      assert.ok(store.intake.stats.groups - groupsBefore < 300, "the poisoned items shared commits with good ones");
      for (const answer of answers) {
        if (answer.reference.startsWith("poison-")) {
          assert.equal(answer.status, 500, `${answer.reference} fails`);
          assert.equal(answer.body.status, 500, "as problem details");
        } else {
          assert.equal(answer.status, 200, `${answer.reference} is stored although its commit held a poisoned item`);
        }
      }
      await assertAnswersMatchStore(answers);
    } finally {
      onDatabase("DROP TRIGGER reject_poison");
    }
  });

  test("when the COMMIT itself fails, every request of that commit gets 503 and nothing of it is stored", async () => {
    // A deferred foreign key is checked at COMMIT: one item makes its whole group's commit fail.
    onDatabase(`CREATE TABLE commit_guard (id INTEGER PRIMARY KEY);
                CREATE TABLE commit_breaker (guard_id INTEGER REFERENCES commit_guard (id) DEFERRABLE INITIALLY DEFERRED);
                CREATE TRIGGER break_commit AFTER INSERT ON work_items WHEN NEW.customer_reference = 'breaks-commit'
                BEGIN INSERT INTO commit_breaker VALUES (42); END;`);
    try {
      const references = Array.from({ length: 200 }, (_, i) => (i === 100 ? "breaks-commit" : `shared-${i}`));
      const answers = await burst(references);
      const failed = answers.filter((a) => a.status !== 200);
      assert.ok(failed.every((a) => a.status === 503 && a.retryAfter !== null), `only 503 with Retry-After: ${JSON.stringify(failed.map((a) => a.status))}`);
      assert.equal(answers.find((a) => a.reference === "breaks-commit")!.status, 503);
      assert.ok(failed.length > 1, "the commit that failed was shared with other requests");
      await assertAnswersMatchStore(answers);
      // The store keeps working after a failed commit.
      const [next] = await burst(["after-the-failure"]);
      assert.equal(next!.status, 200);
      await assertAnswersMatchStore([next!]);
    } finally {
      onDatabase("DROP TRIGGER break_commit; DROP TABLE commit_breaker; DROP TABLE commit_guard;");
    }
  });
});
