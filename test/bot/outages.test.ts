/**
 * What an outage leaves behind (SPEC §14, "Breaker, exactly"; issue 21's findings):
 * - passes of `bot run-once` processes while the authority is down spend exactly the attempts
 *   that opened the breaker, and after each pass no item stays InProgress (no call is in flight);
 * - the database stopping in the middle of a pass (PostgreSQL, a throwaway cluster) spends no
 *   attempt: the items whose answers could not be recorded wait for their claim's lease and are
 *   filed again under the same key.
 * Neither relies on a process finishing in time: the breaker stays open far longer than the
 * passes take, and the lease is checked at a moment it holds by the store's own record of it.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, describe, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { openStore } from "../../src/store/open-store.ts";
import { createAuthorityGate } from "../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../../src/bot/run-once.ts";
import { loadConfig } from "../../src/config.ts";
import { availableBackends, queryRows } from "../helpers/backends.ts";
import { createPgCluster, pgClusterUnsupported } from "../helpers/pg-cluster.ts";
import { runCli, stopAll } from "../helpers/processes.ts";
import { addItems } from "../helpers/store-items.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());


for (const backend of await availableBackends()) {
  describe(`outages [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("four bot run-once passes during an outage: two attempts spent (the breaker's), nothing left InProgress", async () => {
      const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: true, decisionDelayMs: 0 });
      const db = await backend.create();
      const store = await openStore(db.location);
      try {
        await createKey(store, { companyId: 31 });
        await addItems(store, 31, 7);
        const env = {
          DATABASE_URL: db.databaseUrl,
          JWT_SECRET: TEST_JWT_SECRET,
          AUTHORITY_URL: sim.url,
          AUTHORITY_BREAKER_FAILURES: "2",
          // Open for the whole test, however long its four processes take on a loaded machine.
          AUTHORITY_BREAKER_SECONDS: "3600",
          AUTHORITY_MAX_CONCURRENCY: "1",
          BOT_RETRY_BASE_MS: "10",
          BOT_RETRY_MAX_MS: "10",
        };
        for (let pass = 1; pass <= 4; pass += 1) {
          const run = await runCli(["bot", "run-once", "--json"], env);
          assert.equal(run.code, 0, run.stderr);
          const items = await store.listWorkItems(31, { limit: 10 });
          assert.deepEqual(items.filter((item) => item.status !== "New").map((item) => item.status), [], `after pass ${pass} every item is New again`);
          assert.equal(items.reduce((sum, item) => sum + item.attempts, 0), 2, `after pass ${pass}: the two failures that opened the breaker, no more`);
        }
        assert.equal(sim.stats().requests, 2, "no call left once the breaker was open");
      } finally {
        await store.close();
        await sim.close();
        await db.cleanup();
      }
    });
  });
}

const skipCluster = (await availableBackends()).some((backend) => backend.name === "postgres") ? pgClusterUnsupported() : "no PostgreSQL";

test("[postgres] the database stopping mid-pass spends no attempt; the items wait for their lease and are filed under the same key", { skip: skipCluster, timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 1500, errorRate: 0, outage: false, decisionDelayMs: 0 });
  // A throwaway cluster of its own: stopping it disturbs no other test.
  const cluster = await createPgCluster("wia_bot_outage");
  const store = await openStore({ kind: "postgres", url: cluster.url, poolSize: 4 });
  const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 5000 });
  const config = loadConfig({ DATABASE_URL: cluster.url, AUTHORITY_MAX_CONCURRENCY: "4", BOT_LEASE_SECONDS: "8", AUTHORITY_TIMEOUT_MS: "5000" });
  const run = (clock?: () => Date) =>
    runBotOnce({ store, gate: createAuthorityGate({ store, adapter, config, owner: "outage-test", ...(clock ? { clock } : {}) }), config, owner: "outage-test", ...(clock ? { clock } : {}) });
  try {
    await createKey(store, { companyId: 41 });
    const keys = await addItems(store, 41, 4);
    const pass = run();
    while (sim.stats().inFlight < 4) await sleep(5);
    // The database goes away while the answers are on their way: the pass cannot record them.
    cluster.stop();
    await assert.rejects(pass, (error: Error) => error.name === "StoreUnavailableError");
    cluster.start();
    const views = await Promise.all(keys.map((key) => store.getWorkItem(41, key.workItemId)));
    assert.deepEqual(views.map((view) => [view!.status, view!.attempts]), keys.map(() => ["InProgress", 0]), "no attempt spent: the authority did not fail");

    // While the claims' lease holds nobody takes those items over: a pass at its last moment, as
    // the store records it, whatever the restart took; once it ran out the next pass files them
    // again, under the same key, and the authority answers with the same application.
    const leaseEnd = Math.min(
      ...(await queryRows<{ next_attempt_at: Date }>({ kind: "postgres", url: cluster.url }, "SELECT next_attempt_at FROM work_items WHERE status = 'InProgress'")).map((row) =>
        new Date(row.next_attempt_at).getTime(),
      ),
    );
    sim.behaviour.latencyMs = 0;
    assert.equal((await run(() => new Date(leaseEnd - 1))).submitted, 0, "the lease holds");
    await sleep(Math.max(0, leaseEnd + 10 - Date.now()));
    assert.equal((await run()).submitted, 4);
    const stats = sim.stats();
    for (const key of keys) {
      const view = (await store.getWorkItem(41, key.workItemId))!;
      assert.deepEqual([view.status, view.attempts], ["Successful", 0]);
      const perKey = stats.keys[String(key.workItemId)]!;
      assert.equal(perKey.submits, 2, "submitted again after the database came back");
      assert.equal(view.authority.applicationNumber, perKey.applicationNumber, "one application per item, the authority's");
    }
  } finally {
    await adapter.close();
    await store.close().catch(() => undefined);
    await sim.close();
    cluster.drop();
  }
});
