/**
 * Crash test with real processes, per backend (PostgreSQL in a fresh schema): a `bot run-once`
 * process is SIGKILLed mid-batch; while its lease lasts nobody else touches the batch; after it
 * expires a `ROLE=worker` process finishes the batch, and the simulator saw every item
 * registered exactly once.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import type { WorkBatchView, WorkItemView } from "../../src/domain/views.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends } from "../helpers/backends.ts";
import { runCli, startCli, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

for (const backend of await availableBackends()) {
  test(`[${backend.name}] a worker killed mid-batch loses its lease; another finishes the batch; each item registered exactly once`, { timeout: 90_000 }, async () => {
    const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 400, errorRate: 0, outage: false });
    const db = await backend.create();
    const store = await openStore(db.location);
    try {
      const tenant = await createKey(store, { companyId: 9 });
      const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, AUTHORITY_URL: sim.url, BOT_LEASE_SECONDS: "8", AUTHORITY_TIMEOUT_MS: "3000", BOT_CONCURRENCY: "2" };
      const api = await startServer({ ...env, ROLE: "api" });
      const call = async <T>(method: string, path: string, body?: unknown, token?: string): Promise<T> => {
        const response = await fetch(`${api.baseUrl}${path}`, {
          method,
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        assert.equal(response.status, 200, `${method} ${path}`);
        return (await response.json()) as T;
      };
      const { bearerToken } = await call<{ bearerToken: string }>("POST", "/api/Login/Authenticate", { apiKey: tenant.apiKey, secret: tenant.secret });
      const keys: Array<{ workBatchId: number; workItemId: number }> = [];
      for (let i = 0; i < 12; i++) keys.push(await call("POST", "/api/AuthorityRvdm/AddWorkItemCreate", validWorkItem({ customerReference: `crash-${i}` }), bearerToken));
      const batchId = keys[0]!.workBatchId;
      assert.ok(keys.every((k) => k.workBatchId === batchId));

      const doomed = startCli(["bot", "run-once", "--json"], env);
      await waitUntil("the first worker to be mid-batch", () => sim.stats().requests >= 5, 30_000, 5);
      await doomed.kill();
      assert.equal(await doomed.exited, null, "killed by signal");
      const batchAfterKill = await call<WorkBatchView>("GET", `/api/AuthorityRvdm/WorkBatch/${batchId}`, undefined, bearerToken);
      assert.equal(batchAfterKill.status, "Processing");
      assert.ok(batchAfterKill.counts.inProgress >= 1, "the dead worker left items InProgress");
      assert.ok(batchAfterKill.counts.successful < 12);

      // The lease still holds: another worker finds nothing to claim.
      const blocked = await runCli(["bot", "run-once", "--json"], env);
      assert.equal(blocked.code, 0, blocked.stderr);
      assert.deepEqual(JSON.parse(blocked.stdout), { batches: 0, succeeded: 0, failed: 0, retried: 0 });

      const worker = await startServer({ ...env, ROLE: "worker", BOT_SCHEDULE: "* * * * * *" });
      const done = await waitUntil(
        "the batch to complete",
        async () => {
          const batch = await call<WorkBatchView>("GET", `/api/AuthorityRvdm/WorkBatch/${batchId}`, undefined, bearerToken);
          return batch.status === "Completed" ? batch : undefined;
        },
        45_000,
        200,
      );
      assert.equal((await worker.stop()).code, 0, "the worker shuts down cleanly on SIGTERM");
      await api.stop();
      assert.deepEqual(done.counts, { new: 0, inProgress: 0, successful: 12, failed: 0, cancelled: 0 });

      const stats = sim.stats();
      assert.equal(stats.registrations, 12, "twelve registrations for twelve items");
      for (const key of keys) {
        const perKey = stats.keys[String(key.workItemId)];
        assert.equal(perKey?.registrations, 1, `item ${key.workItemId} registered once`);
        const item = await store.getWorkItem(9, key.workItemId);
        assert.equal(item?.status, "Successful");
        assert.equal((item as WorkItemView).result?.registrationNumber, perKey?.registrationNumber);
      }
      assert.ok(
        Object.values(stats.keys).some((k) => k.requests >= 2),
        "an item in flight when the worker died was submitted again, and the authority deduplicated it",
      );
    } finally {
      await stopAll();
      await store.close();
      await sim.close();
      await db.cleanup();
    }
  });
}
