import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startAuthoritySim, type AuthoritySim } from "../../../src/authority-sim/server.ts";
import { createHttpAuthorityAdapter } from "../../../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../../../src/bot/run-once.ts";
import { assertForeignIdIsNotFound, assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";
import { queueAll } from "../../helpers/sweeps.ts";
import { createAuthorityGate } from "../../../src/bot/authority-gate.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

const itemUrl = (id: number) => `/api/AuthorityRvdm/WorkItem/${id}`;

for (const backend of await availableBackends()) {
  describe(`DELETE WorkItem/{id} [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let t: TestApp;
    let owner: Tenant;
    let other: Tenant;
    let sim: AuthoritySim;
    before(async () => {
      t = await createTestApp(backend);
      owner = await t.tenant(501);
      other = await t.tenant(502);
      sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
    });
    after(async () => {
      await sim.close();
      await t.close();
    });

    const add = async (token = owner.token) => {
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(token), payload: validWorkItem() });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ workBatchId: number; workItemId: number }>();
    };
    const cancel = (id: number | string, token = owner.token) => t.app.inject({ method: "DELETE", url: itemUrl(Number(id)), headers: bearer(token) });
    const batch = async (id: number) => (await t.app.inject({ method: "GET", url: `/api/AuthorityRvdm/WorkBatch/${id}`, headers: bearer(owner.token) })).json();
    const runBot = async () => {
      const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
      try {
        return await runBotOnce({ store: t.store, gate: createAuthorityGate({ store: t.store, adapter, config: t.config, owner: "test" }), config: t.config, owner: "test" });
      } finally {
        await adapter.close();
      }
    };

    test("is guarded, and another company's item is a 404 like a missing one", async () => {
      const key = await add();
      await assertRouteIsGuarded(t, owner, { method: "DELETE", url: itemUrl(key.workItemId) });
      await assertForeignIdIsNotFound(t, other, { method: "DELETE", url: itemUrl(key.workItemId) }, itemUrl(999_999_999));
      const still = await t.store.getWorkItem(owner.companyId, key.workItemId);
      assert.equal(still?.status, "New", "the foreign DELETE changed nothing");
    });

    test("a bad id is a 400 problem", async () => {
      const response = await t.app.inject({ method: "DELETE", url: "/api/AuthorityRvdm/WorkItem/abc", headers: bearer(owner.token) });
      assert.equal(response.statusCode, 400);
      assert.ok(problem(response).errors?.workItemId);
    });

    test("cancels a New item of an Open batch: 200 with the item view, counted in the batch, 409 the second time", async () => {
      const key = await add();
      const countsBefore = (await batch(key.workBatchId)).counts;
      const response = await cancel(key.workItemId);
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers["content-type"]), /^application\/json/);
      const view = response.json();
      assert.equal(view.status, "Cancelled");
      assert.equal(view.workItemId, key.workItemId);
      assert.ok(view.completedAt);
      assert.deepEqual((await batch(key.workBatchId)).counts, { ...countsBefore, new: countsBefore.new - 1, cancelled: countsBefore.cancelled + 1 });

      const again = await cancel(key.workItemId);
      assert.equal(again.statusCode, 409);
      assert.equal(problem(again).type, "urn:work-item-api:problem:state-conflict");
      assert.match(problem(again).detail, /is Cancelled/);
    });

    test("409 once the bot has closed the batch, and for a finished item; the bot completes an all-cancelled batch", async () => {
      const kept = await add();
      const dropped = await add();
      assert.equal((await cancel(dropped.workItemId)).statusCode, 200);
      const before = (await batch(kept.workBatchId)).counts;
      assert.ok(before.new >= 1 && before.cancelled >= 1);
      await runBot();
      const afterRun = await cancel(kept.workItemId);
      assert.equal(afterRun.statusCode, 409);
      assert.match(problem(afterRun).detail, /Successful/);
      const done = await batch(kept.workBatchId);
      assert.equal(done.status, "Completed");
      assert.deepEqual(done.counts, { new: 0, inProgress: 0, submitted: 0, successful: before.new, failed: 0, cancelled: before.cancelled, withdrawn: 0 });

      const lonely = await add();
      assert.notEqual(lonely.workBatchId, kept.workBatchId);
      assert.equal((await cancel(lonely.workItemId)).statusCode, 200);
      const again = await cancel(lonely.workItemId);
      assert.equal(again.statusCode, 409);
      assert.equal((await batch(lonely.workBatchId)).status, "Open");
      const registrationsBefore = sim.stats().requests;
      await runBot();
      const allCancelled = await batch(lonely.workBatchId);
      assert.equal(allCancelled.status, "Completed");
      assert.deepEqual(allCancelled.counts, { new: 0, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 1, withdrawn: 0 });
      assert.equal(sim.stats().requests, registrationsBefore, "a cancelled item never reaches the authority");
    });

    test("409 for a New item whose batch the bot has taken up", async () => {
      const key = await add();
      await queueAll(t.store, new Date().toISOString());
      const response = await cancel(key.workItemId);
      assert.equal(response.statusCode, 409);
      assert.match(problem(response).detail, /is Processing/);
      assert.equal((await t.store.getWorkItem(owner.companyId, key.workItemId))?.status, "New");
    });
  });
}
