/**
 * Two worker processes on PostgreSQL against one simulated authority (SPEC §14): the capacity is
 * shared through the store, so the authority never has more calls in flight than
 * AUTHORITY_MAX_CONCURRENCY, however many workers there are; and while the authority is down
 * the breaker keeps every worker from calling, so no item fails, and all are filed once it is back.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends } from "../helpers/backends.ts";
import { startServer, stopAll } from "../helpers/processes.ts";
import { addItems } from "../helpers/store-items.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");

test("two workers on PostgreSQL: never more calls in flight than the limit; no item fails while the authority is down", { skip: !postgres, timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 250, errorRate: 0, outage: false, decisionDelayMs: 0 });
  const db = await postgres!.create();
  const store = await openStore(db.location);
  try {
    await createKey(store, { companyId: 21 });
    await createKey(store, { companyId: 22 });
    await addItems(store, 21, 30);
    await addItems(store, 22, 10);
    const env = {
      DATABASE_URL: db.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      AUTHORITY_URL: sim.url,
      ROLE: "worker",
      BOT_SCHEDULE: "* * * * * *",
      AUTHORITY_MAX_CONCURRENCY: "3",
      AUTHORITY_MAX_RPS: "0",
      AUTHORITY_TIMEOUT_MS: "2000",
      AUTHORITY_BREAKER_FAILURES: "2",
      AUTHORITY_BREAKER_SECONDS: "1",
      BOT_MAX_ATTEMPTS: "3",
      BOT_RETRY_BASE_MS: "200",
      BOT_RETRY_MAX_MS: "400",
      BOT_POLL_SECONDS: "1",
    };
    const workers = [await startServer(env), await startServer(env)];
    const decided = async () => {
      const counts = { successful: 0, failed: 0 };
      for (const companyId of [21, 22]) {
        for (const item of await store.listWorkItems(companyId, { limit: 100 })) {
          if (item.status === "Successful") counts.successful += 1;
          if (item.status === "Failed") counts.failed += 1;
        }
      }
      return counts;
    };
    // Slow at first: both workers file, sharing three slots.
    await waitUntil("a few items filed", async () => (await decided()).successful >= 6, undefined, 100);
    // Then down for a while: the breaker opens, and nothing more is spent.
    sim.behaviour.outage = true;
    await sleep(4000);
    assert.equal((await decided()).failed, 0, "no item fails while the breaker keeps the workers back");
    sim.behaviour.outage = false;
    await waitUntil("every item filed", async () => ((await decided()).successful === 40 ? true : undefined), undefined, 200);
    for (const worker of workers) assert.equal((await worker.stop()).code, 0);

    const stats = sim.stats();
    assert.ok(stats.maxConcurrent <= 3, `the authority saw ${stats.maxConcurrent} calls at once; the limit is 3 for both workers together`);
    assert.equal(stats.maxConcurrent, 3, "the two workers used the whole capacity");
    assert.equal(stats.registrations, 40, "each item registered once");
    assert.equal((await decided()).failed, 0);
  } finally {
    await stopAll();
    await store.close();
    await sim.close();
    await db.cleanup();
  }
});
