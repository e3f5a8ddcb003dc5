/**
 * A ROLE=worker process listens for its probes and its metrics, and for nothing else: the
 * platform readies it by /readyz, restarts it by /healthz and scrapes the bot's gauges from its
 * /metrics, which no other role has (a split deployment's WorkItemApiBotLapsStalled alert reads
 * them). SIGTERM still ends it with exit 0.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sqliteBackend } from "./helpers/backends.ts";
import { startServer, stopAll } from "./helpers/processes.ts";
import { metricValue } from "./helpers/prometheus.ts";
import { TEST_JWT_SECRET } from "./helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "./helpers/waiting.ts";

after(() => stopAll());

test("a worker answers /healthz, /readyz and /metrics with the bot's gauges, refuses the API's routes, and stops on SIGTERM", { timeout: HANG_TIMEOUT_MS }, async () => {
  const db = await sqliteBackend.create();
  try {
    const worker = await startServer({ DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, ROLE: "worker", BOT_SCHEDULE: "*/5 * * * *" });
    const get = (path: string, init?: RequestInit) => fetch(`${worker.baseUrl}${path}`, init);

    assert.deepEqual(await (await get("/healthz")).json(), { status: "ok" });
    assert.deepEqual(await (await get("/readyz")).json(), { status: "ready" });
    const metrics = await get("/metrics");
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.equal(metricValue(text, "work_item_api_bot_schedule_interval_seconds"), 300, "the worker's own gauge: its schedule's gap");
    assert.equal(metricValue(text, "work_item_api_authority_breaker_state", { state: "closed" }), 1);

    const login = await get("/api/Login/Authenticate", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(login.status, 404, "a worker serves no API route");
    assert.match(login.headers.get("content-type") ?? "", /application\/problem\+json/);
    assert.equal((await get("/docs")).status, 404);

    const stopped = await worker.stop();
    assert.equal(stopped.code, 0, "SIGTERM: a clean exit");
  } finally {
    await db.cleanup();
  }
});
