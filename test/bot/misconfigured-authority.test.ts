/**
 * Issue 24, defect 8: when the authority answers 401, 403, 404 or 405 at submit (a wrong
 * AUTHORITY_URL, revoked credentials), that is our fault, not the document's. Filing stops as an
 * open breaker stops it: no item fails, no attempt is spent, each item keeps its place, and the
 * reason is on the Overview (operator API and console) and in a metric. Once the authority is
 * put right, the next probe closes the breaker and the same items are filed.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { createAuthorityGate } from "../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../../src/bot/run-once.ts";
import { createMetrics } from "../../src/metrics.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { addItems } from "../helpers/store-items.ts";
import { bearer, createTestApp } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** An "authority" that answers every call with `status`, counting the calls. */
async function refusingAuthority(status: number): Promise<{ url: string; calls: () => number; close: () => Promise<void> }> {
  let calls = 0;
  const server = createServer((request, response) => {
    calls += 1;
    request.resume();
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ message: `refused with ${status}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const backend of await availableBackends()) {
  describe(`an authority that refuses our calls [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    for (const status of [401, 403, 404, 405]) {
      test(`${status} at submit stops filing like an open breaker: no attempt spent, nothing Failed, the reason on the Overview and in a metric`, async () => {
        const metrics = createMetrics();
        const t = await createTestApp(backend, { AUTHORITY_BREAKER_SECONDS: "1", AUTHORITY_MAX_CONCURRENCY: "1" }, { metrics });
        const refusing = await refusingAuthority(status);
        const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
        const wrong = createHttpAuthorityAdapter({ baseUrl: refusing.url, timeoutMs: 2000 });
        const right = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
        try {
          const { companyId } = await t.tenant(2408);
          await addItems(t.store, companyId, 5, "https://93.184.215.14/hooks");
          const gate = createAuthorityGate({ store: t.store, adapter: wrong, config: t.config, owner: "bot" });
          metrics.setBreakerStateSource(
            () => gate.breakerState(),
            () => gate.breakerReason(),
          );

          const refused = await runBotOnce({ store: t.store, gate, config: t.config, owner: "bot" });
          assert.deepEqual([refused.failed, refused.succeeded], [0, 0], JSON.stringify(refused));
          assert.equal(refusing.calls(), 1, "one call, then the breaker kept the rest from going");
          const items = await t.store.listWorkItems(companyId, { limit: 10 });
          assert.deepEqual(
            items.map((item) => [item.status, item.attempts]),
            items.map(() => ["New", 0]),
            "every item is New with no attempt spent",
          );
          for (const item of items) assert.deepEqual(await t.outboxEvents(item.workItemId), [], "the integrator is told nothing");

          const operator = await createTestOperator(t.store, "viewer");
          const overview = await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(operator.token) });
          const bot = overview.json<{ bot: { breaker: string; breakerReason: string | null } }>().bot;
          assert.equal(bot.breaker, "open");
          assert.match(bot.breakerReason ?? "", new RegExp(`answered ${status} at submit.*AUTHORITY_URL`));
          const admin = await createOperatorAccount(t.store, { email: `breaker-${status}@example.com`, role: "admin" });
          const page = await (await signedInClient(t.app, admin.email, admin.password)).get("/console");
          assert.match(page.body, new RegExp(`Filing is stopped: the Authority answered ${status} at submit`));
          const scrape = await t.app.inject({ url: "/metrics" });
          assert.match(scrape.body, /^work_item_api_authority_refusing_calls 1$/m);

          // Put right: after AUTHORITY_BREAKER_SECONDS the probe goes to the right authority, closes the breaker, and the same items are filed.
          await sleep(1100);
          const fixed = createAuthorityGate({ store: t.store, adapter: right, config: t.config, owner: "bot" });
          const filed = await runBotOnce({ store: t.store, gate: fixed, config: t.config, owner: "bot" });
          assert.equal(filed.succeeded, 5, JSON.stringify(filed));
          const after = await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(operator.token) });
          assert.deepEqual(
            (({ breaker, breakerReason }) => ({ breaker, breakerReason }))(after.json<{ bot: { breaker: string; breakerReason: string | null } }>().bot),
            { breaker: "closed", breakerReason: null },
          );
          assert.equal(refusing.calls(), 1);
        } finally {
          await wrong.close();
          await right.close();
          await refusing.close();
          await sim.close();
          await t.close();
        }
      });
    }
  });
}
