/**
 * Durability of acknowledged adds: the real server process (SQLite, group commit on its writer
 * thread) is killed with SIGKILL in the middle of a burst over HTTP. Every item it answered 200
 * for must be in the database afterwards, as answered; and the database must be intact.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import Database from "better-sqlite3";
import { createKey } from "../../../src/admin/admin.ts";
import { openSqliteStore } from "../../../src/store/sqlite/sqlite-store.ts";
import { freePort, startServer } from "../../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

test("SIGKILL of the server during a burst loses no acknowledged item", { timeout: HANG_TIMEOUT_MS }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "wia-crash-"));
  const path = join(dir, "data", "work-item-api.db");
  try {
    const setup = openSqliteStore(path);
    const key = await createKey(setup, { companyId: 5 });
    await setup.close();

    // Silent, so no log line says it started: it is up when /healthz answers.
    const start = async () =>
      startServer(
        { DATABASE_URL: `sqlite:${path}`, JWT_SECRET: TEST_JWT_SECRET, ROLE: "api", LOG_LEVEL: "silent", RATE_LIMIT_TENANT_RPS: "0" },
        { port: await freePort(), readyBy: "healthz" },
      );
    const server = await start();
    const { baseUrl } = server;
    const login = await fetch(`${baseUrl}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
    const { bearerToken } = (await login.json()) as { bearerToken: string };

    // 40 clients add items back to back; the server is killed once 300 items were acknowledged.
    const acknowledged = new Map<string, { workItemId: number; workBatchId: number }>();
    let killed = false;
    let serial = 0;
    const client = async () => {
      while (!killed) {
        const reference = `crash-${serial++}`;
        try {
          const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${bearerToken}` },
            body: JSON.stringify(validWorkItem({ customerReference: reference })),
          });
          if (response.status === 200) acknowledged.set(reference, (await response.json()) as { workItemId: number; workBatchId: number });
        } catch {
          return; // the connection died with the server
        }
        if (acknowledged.size >= 300 && !killed) {
          killed = true;
          void server.kill();
        }
      }
    };
    await Promise.all(Array.from({ length: 40 }, client));
    await server.exited;
    assert.ok(acknowledged.size >= 300, `the burst was acknowledged (${acknowledged.size} items) before the kill`);

    // A restarted server answers every acknowledged item as it was acknowledged.
    const restarted = await start();
    try {
      for (const [reference, key] of acknowledged) {
        const response = await fetch(`${restarted.baseUrl}/api/AuthorityRvdm/WorkItem/${key.workItemId}`, { headers: { authorization: `Bearer ${bearerToken}` } });
        assert.equal(response.status, 200, `item ${key.workItemId} (${reference}) after the restart`);
        const item = (await response.json()) as { customerReference: string; workBatchId: number; status: string };
        assert.deepEqual([item.customerReference, item.workBatchId, item.status], [reference, key.workBatchId, "New"]);
      }
    } finally {
      await restarted.stop();
    }

    // The database file itself: intact, and holding every acknowledged item.
    const db = new Database(path, { readonly: true });
    try {
      assert.equal((db.pragma("integrity_check", { simple: true }) as string), "ok");
      const find = db.prepare("SELECT work_item_id, work_batch_id FROM work_items WHERE company_id = ? AND customer_reference = ?");
      const lost = [...acknowledged].filter(([reference, key]) => {
        const row = find.get(5, reference) as { work_item_id: number; work_batch_id: number } | undefined;
        return row?.work_item_id !== key.workItemId || row.work_batch_id !== key.workBatchId;
      });
      assert.deepEqual(lost, [], "every acknowledged item is stored as it was answered");
      const stored = (db.prepare("SELECT COUNT(*) AS n FROM work_items").get() as { n: number }).n;
      assert.ok(stored >= acknowledged.size, `${stored} stored, ${acknowledged.size} acknowledged`);
      assert.equal((db.prepare("SELECT COUNT(*) AS n FROM work_batches WHERE status = 'Open'").get() as { n: number }).n, 1);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
