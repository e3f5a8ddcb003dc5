/**
 * Filing in two stages (SPEC §10), end to end in one process per backend: the authority
 * simulator over real HTTP decides later than it answers a submit, and the bot submits, asks,
 * backs off, respects capacity and the shared circuit breaker, and flags deadlines.
 */
import { registrationOf, WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import type { AuthorityAdapter } from "../../src/authority/protocol.ts";
import { createAuthorityGate } from "../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { createMetrics } from "../../src/metrics.ts";
import { availableBackends } from "../helpers/backends.ts";
import { setConfig, withBot } from "../helpers/bot-harness.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { fileOrder, type QueuedItem } from "../../src/scheduler/order.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** Wraps an adapter and remembers every call: which, for what, and when it started. */
function recording(adapter: AuthorityAdapter) {
  const calls: Array<{ kind: "submit" | "status"; subject: string; at: number }> = [];
  const wrapped: AuthorityAdapter = {
    // Its name, its follow-up calls of every kind and its close as they are.
    ...adapter,
    submit(request) {
      calls.push({ kind: "submit", subject: request.idempotencyKey, at: performance.now() });
      return adapter.submit(request);
    },
    status(applicationNumber) {
      calls.push({ kind: "status", subject: applicationNumber, at: performance.now() });
      return adapter.status(applicationNumber);
    },
  };
  return { adapter: wrapped, calls };
}

/** An authority that answers 200 with whatever body the test sets. */
async function startGarbageAuthority(): Promise<{ url: string; body: { submit: string; status: string }; close(): Promise<void> }> {
  const body = { submit: "", status: "" };
  const server: Server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(request.method === "POST" ? body.submit : body.status);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, body, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Items with a webhook URL get outbox rows (nothing delivers them here: no dispatcher runs). */
const hooked = (fields: Record<string, unknown> = {}) => validWorkItem({ webhookUrl: "https://93.184.215.14/hooks", ...fields });

const at = (value: unknown) => new Date(value as string | Date).getTime();

for (const backend of await availableBackends()) {
  describe(`two-stage filing [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("a decision that takes time: Submitted with an application number, workitem.submitted once, decided by a later pass", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "600", BOT_POLL_SECONDS: "1" }, async ({ t, sim, add, item, batch, run }) => {
        const good = await add(hooked({ customerReference: "good" }));
        const bad = await add(hooked({ customerReference: "bad", senderChamberOfCommerceNo: { sendValue: "1234567" } }));
        const fresh = await item(good.workItemId);
        assert.deepEqual(fresh.authority, { applicationNumber: null, registrationNumber: null, submittedAt: null, decidedAt: null });

        assert.deepEqual(await run(), { batches: 1, submitted: 2, succeeded: 0, failed: 0, retried: 0 });
        for (const key of [good, bad]) {
          const view = await item(key.workItemId);
          assert.equal(view.status, "Submitted");
          assert.match(view.authority.applicationNumber!, /^RVDM-A-[0-9A-Z]{10}$/);
          assert.equal(view.authority.applicationNumber, sim.stats().keys[String(key.workItemId)]!.applicationNumber);
          assert.ok(view.authority.submittedAt);
          assert.deepEqual([view.authority.registrationNumber, view.authority.decidedAt, view.result, view.error, view.completedAt], [null, null, null, null, null]);
          assert.deepEqual(await t.outboxEvents(key.workItemId), ["workitem.submitted"]);
        }
        const waiting = await batch(good.workBatchId);
        assert.equal(waiting.status, "Processing", "a batch is Completed only when every item is terminal");
        assert.equal(waiting.counts.submitted, 2);

        const asked = sim.stats().statusRequests;
        assert.deepEqual(await run(), { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 }, "the next poll is not due yet");
        assert.equal(sim.stats().statusRequests, asked);

        await sleep(1100);
        assert.deepEqual(await run(), { batches: 1, submitted: 0, succeeded: 1, failed: 1, retried: 0 });
        const registered = await item(good.workItemId);
        assert.equal(registered.status, "Successful");
        assert.equal(registered.authority.registrationNumber, registrationOf(registered)!.registrationNumber);
        assert.equal(registered.authority.applicationNumber, sim.stats().keys[String(good.workItemId)]!.applicationNumber, "the number from submit is kept");
        assert.ok(registered.authority.decidedAt && registered.authority.decidedAt >= registered.authority.submittedAt!);
        const rejected = await item(bad.workItemId);
        assert.equal(rejected.status, "Failed");
        assert.equal(rejected.error!.code, "AUTHORITY_REJECTED");
        assert.ok(rejected.authority.applicationNumber, "an item rejected at the decision keeps its application number");
        assert.deepEqual([rejected.authority.registrationNumber, Boolean(rejected.authority.decidedAt)], [null, true]);
        assert.equal((await batch(good.workBatchId)).status, "Completed");

        assert.deepEqual(await t.outboxEvents(good.workItemId), ["workitem.submitted", "workitem.succeeded"]);
        assert.deepEqual(await t.outboxEvents(bad.workItemId), ["workitem.submitted", "workitem.failed"]);
        for (const key of [good, bad]) {
          const perKey = sim.stats().keys[String(key.workItemId)]!;
          assert.deepEqual([perKey.submits, perKey.statusRequests], [1, 2], "submitted once, asked twice");
        }
      }));

    test("with a decision delay of 0 one pass goes from New to the decision, and no workitem.submitted is sent", () =>
      withBot(backend, {}, async ({ t, add, item, run }) => {
        const key = await add(hooked());
        assert.deepEqual(await run(), { batches: 1, submitted: 1, succeeded: 1, failed: 0, retried: 0 });
        const view = await item(key.workItemId);
        assert.equal(view.status, "Successful");
        assert.ok(view.authority.applicationNumber && view.authority.registrationNumber && view.authority.submittedAt && view.authority.decidedAt);
        assert.deepEqual(await t.outboxEvents(key.workItemId), ["workitem.succeeded"]);
      }));

    test("status requests back off: BOT_POLL_SECONDS, doubling, at most five minutes", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "3600000", BOT_POLL_SECONDS: "1" }, async ({ t, sim, add, item, run }) => {
        const key = await add(hooked());
        let now = new Date();
        const waits: number[] = [];
        for (let pass = 0; pass < 11; pass++) {
          await run({ clock: () => now });
          const [row] = await t.query<{ next_attempt_at: string | Date; polls: number }>("SELECT next_attempt_at, polls FROM work_items WHERE work_item_id = $1", [key.workItemId]);
          assert.equal(Number(row!.polls), pass + 1);
          const next = at(row!.next_attempt_at);
          waits.push((next - now.getTime()) / 1000);
          now = new Date(next);
        }
        assert.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert.equal((await item(key.workItemId)).status, "Submitted");
        assert.deepEqual([sim.stats().keys[String(key.workItemId)]!.submits, sim.stats().keys[String(key.workItemId)]!.statusRequests], [1, 11]);
        assert.deepEqual(await t.outboxEvents(key.workItemId), ["workitem.submitted"], "announced once, not on every pending answer");
      }));

    test("an application the authority no longer knows fails with AUTHORITY_APPLICATION_UNKNOWN and is not submitted again", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "60000", BOT_POLL_SECONDS: "1" }, async ({ t, add, item, batch, run }) => {
        const key = await add(hooked());
        await run();
        const applicationNumber = (await item(key.workItemId)).authority.applicationNumber;
        assert.ok(applicationNumber);

        const amnesiac = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
        const adapter = createHttpAuthorityAdapter({ baseUrl: amnesiac.url, timeoutMs: 2000 });
        try {
          const later = new Date(Date.now() + 2000);
          assert.deepEqual(await run({ adapter, clock: () => later }), { batches: 1, submitted: 0, succeeded: 0, failed: 1, retried: 0 });
          const view = await item(key.workItemId);
          assert.equal(view.status, "Failed");
          assert.equal(view.error!.code, "AUTHORITY_APPLICATION_UNKNOWN");
          assert.match(view.error!.message, new RegExp(applicationNumber));
          assert.equal(view.authority.applicationNumber, applicationNumber);
          assert.equal(amnesiac.stats().keys[String(key.workItemId)], undefined, "not submitted again");
          assert.equal(amnesiac.stats().statusRequests, 1);
          assert.equal((await batch(key.workBatchId)).status, "Completed");
          assert.deepEqual(await t.outboxEvents(key.workItemId), ["workitem.submitted", "workitem.failed"]);
        } finally {
          await adapter.close();
          await amnesiac.close();
        }
      }));

    test("garbage from the authority (not JSON, missing fields, an unknown status) is a transient failure recorded on the item", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "300", BOT_POLL_SECONDS: "1" }, async ({ t, add, item, run }) => {
        const garbage = await startGarbageAuthority();
        const adapter = createHttpAuthorityAdapter({ baseUrl: garbage.url, timeoutMs: 2000 });
        const lastError = async (id: number) =>
          (await t.query<{ last_error: string | null; status: string }>("SELECT last_error, status FROM work_items WHERE work_item_id = $1", [id]))[0]!;
        try {
          const key = await add(hooked());
          for (const [round, answer] of ["<html>busy</html>", "{}", '{"applicationNumber": 42}'].entries()) {
            garbage.body.submit = answer;
            await sleep(60); // past the retry backoff of the previous round
            assert.deepEqual(await run({ adapter }), { batches: 1, submitted: 0, succeeded: 0, failed: 0, retried: 1 }, answer);
            const view = await item(key.workItemId);
            assert.deepEqual([view.status, view.attempts], ["New", round + 1], "never left InProgress, one attempt spent");
            assert.match((await lastError(key.workItemId)).last_error ?? "", /AuthorityUnavailableError/);
          }

          await sleep(60);
          assert.deepEqual(await run(), { batches: 1, submitted: 1, succeeded: 0, failed: 0, retried: 0 }, "the real authority takes it");
          for (const answer of ['{"status": "maybe"}', "not json", '{"status": "registered"}']) {
            garbage.body.status = answer;
            const later = new Date(Date.now() + 400_000);
            await run({ adapter, clock: () => later });
            const row = await lastError(key.workItemId);
            assert.equal(row.status, "Submitted", `${answer}: a failing status request never fails a filed item`);
            assert.match(row.last_error ?? "", /AuthorityUnavailableError/);
          }
          await sleep(300); // the decision delay
          const muchLater = new Date(Date.now() + 3_600_000);
          assert.deepEqual(await run({ clock: () => muchLater }), { batches: 1, submitted: 0, succeeded: 1, failed: 0, retried: 0 });
          assert.equal((await lastError(key.workItemId)).last_error, null);
        } finally {
          await adapter.close();
          await garbage.close();
        }
      }));

    test("the circuit breaker: opens after N transient failures in a row, spends no attempts while open, is shared through the store, and one probe closes it", () =>
      withBot(backend, { AUTHORITY_BREAKER_FAILURES: "2", AUTHORITY_BREAKER_SECONDS: "1", AUTHORITY_MAX_CONCURRENCY: "1" }, async ({ t, sim, add, item, run }) => {
        const keys = [];
        for (let i = 0; i < 5; i++) keys.push(await add(hooked({ customerReference: `b-${i}` })));
        await setConfig(sim, { outage: true });
        const gate = createAuthorityGate({ store: t.store, adapter: createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 }), config: t.config, owner: "worker-a" });
        const metrics = createMetrics();
        metrics.setBreakerStateSource(() => gate.breakerState());
        const gauge = async () => (await metrics.registry.getSingleMetricAsString("work_item_api_authority_breaker_state")).split("\n").filter((line) => line.endsWith(" 1"));
        assert.deepEqual(await gauge(), ['work_item_api_authority_breaker_state{state="closed"} 1']);

        assert.deepEqual(await run({ gate }), { batches: 1, submitted: 0, succeeded: 0, failed: 0, retried: 2 });
        assert.equal(sim.stats().requests, 2, "no call after the breaker opened");
        const attempts = await Promise.all(keys.map(async (k) => (await item(k.workItemId)).attempts));
        assert.deepEqual(attempts.sort(), [0, 0, 0, 1, 1], "attempts are not spent while it is open");
        assert.deepEqual(await gauge(), ['work_item_api_authority_breaker_state{state="open"} 1']);

        // Another process (a fresh gate over the same store) sees the open breaker and claims nothing.
        assert.deepEqual(await run(), { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 });
        assert.equal(sim.stats().requests, 2);

        // After AUTHORITY_BREAKER_SECONDS one probe goes; it fails, and the breaker opens again.
        await sleep(1100);
        assert.deepEqual(await run(), { batches: 1, submitted: 0, succeeded: 0, failed: 0, retried: 1 });
        assert.equal(sim.stats().requests, 3, "exactly one probe call");

        // The next probe succeeds, the breaker closes, and the rest goes through in the same pass.
        await sleep(1100);
        await setConfig(sim, { outage: false });
        assert.deepEqual(await run({ gate }), { batches: 1, submitted: 5, succeeded: 5, failed: 0, retried: 0 });
        assert.deepEqual(await gauge(), ['work_item_api_authority_breaker_state{state="closed"} 1']);
        const [row] = await t.query<{ state: string }>("SELECT state FROM authority_breakers");
        assert.equal(row!.state, "closed");
        await gate.adapter.close();
      }));

    test("capacity: AUTHORITY_MAX_CONCURRENCY calls in flight and AUTHORITY_MAX_RPS calls a second", () =>
      withBot(backend, { AUTHORITY_MAX_CONCURRENCY: "2", AUTHORITY_MAX_RPS: "5" }, async ({ sim, add, run }) => {
        for (let i = 0; i < 10; i++) await add(hooked({ customerReference: `cap-${i}` }));
        // Slower than the 200 ms between two sends: calls overlap, up to the concurrency.
        sim.behaviour.latencyMs = 300;
        const calls = recording(createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 }));
        assert.deepEqual(await run({ adapter: calls.adapter }), { batches: 1, submitted: 10, succeeded: 10, failed: 0, retried: 0 });
        await calls.adapter.close();
        assert.equal(sim.stats().maxConcurrent, 2);
        const submits = calls.calls.filter((c) => c.kind === "submit").map((c) => c.at);
        assert.equal(submits.length, 10);
        // 5 a second, evenly spaced: no second holds a sixth call.
        assert.ok(submits[5]! - submits[0]! >= 900, `sixth submit ${Math.round(submits[5]! - submits[0]!)} ms after the first`);
      }));

    test("with AUTHORITY_MAX_CONCURRENCY=1, submits go, and authority.submittedAt follow, the one queue's order over every company (SPEC §14)", () =>
      withBot(backend, { AUTHORITY_MAX_CONCURRENCY: "1", BOT_CLAIM_SIZE: "4" }, async ({ t, sim, tenant, item, run }) => {
        const tenants = new Map([[tenant.companyId, tenant]]);
        for (const companyId of [8, 9]) tenants.set(companyId, await t.tenant(companyId));
        const overdue = new Date(Date.now() + 3600_000).toISOString();
        // Interleaved across three companies: two deadlines to come, one passed.
        const plan: Array<[number, string]> = [
          [7, "2027-03-20T08:00:00Z"], [8, "2027-03-20T08:00:00Z"], [7, "2027-03-20T08:00:00Z"], [9, "2027-03-10T08:00:00Z"],
          [8, overdue], [7, "2027-03-10T08:00:00Z"], [9, "2027-03-20T08:00:00Z"], [7, "2027-03-20T08:00:00Z"],
          [8, "2027-03-20T08:00:00Z"], [9, "2027-03-10T08:00:00Z"],
        ];
        const added: QueuedItem[] = [];
        for (const [companyId, exportDate] of plan) {
          const response = await t.app.inject({
            method: "POST",
            url: "/api/AuthorityRvdm/AddWorkItemCreate",
            headers: bearer(tenants.get(companyId)!.token),
            payload: validWorkItem({ customerReference: `order-${added.length}`, exportDate }),
          });
          assert.equal(response.statusCode, 200, response.body);
          const { workItemId } = response.json();
          added.push({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, workItemId, deadlineAt: null });
        }
        for (const queued of added) queued.deadlineAt = (await t.store.getWorkItem(queued.companyId, queued.workItemId))!.deadlineAt;

        const calls = recording(createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 }));
        try {
          await run({ adapter: calls.adapter });
        } finally {
          await calls.adapter.close();
        }
        const expected = fileOrder(added, new Date().toISOString()).map((queued) => queued.workItemId);
        assert.deepEqual(calls.calls.filter((call) => call.kind === "submit").map((call) => Number(call.subject)), expected);
        // The reference's first steps, spelled out: the earliest deadline's three items, its two
        // companies taking turns (neither served yet: company 7 first), then the later deadline's.
        const companyOf = (id: number) => added.find((queued) => queued.workItemId === id)!.companyId;
        assert.deepEqual(expected.slice(0, 5).map(companyOf), [7, 9, 9, 8, 7]);
        assert.equal(expected.at(-1), added[4]!.workItemId, "the overdue item last");
        const submittedAt = await Promise.all(expected.map(async (id) => {
          const queued = added.find((entry) => entry.workItemId === id)!;
          return (await t.store.getWorkItem(queued.companyId, id))!.authority.submittedAt!;
        }));
        assert.deepEqual([...submittedAt].sort(), submittedAt, "authority.submittedAt in the queue's order");
        assert.equal((await item(added[0]!.workItemId)).status, "Successful");
      }));

    test("deadlines: on-time items earliest deadline first, then late ones, and workitem.deadline_at_risk once for an item not filed 2 hours before its deadline", () =>
      withBot(backend, { AUTHORITY_MAX_CONCURRENCY: "1", AUTHORITY_BREAKER_FAILURES: "100" }, async ({ t, sim, add, item, run }) => {
        const late = await add(hooked({ customerReference: "late", exportDate: "2027-03-30T08:00:00Z" }));
        const soon = await add(hooked({ customerReference: "soon", exportDate: "2027-03-10T08:00:00Z" }));
        const middle = await add(hooked({ customerReference: "middle", exportDate: "2027-03-20T08:00:00Z" }));
        // Its deadline has passed: intake takes it anyway, and the bot flags it.
        const overdue = await add(hooked({ customerReference: "overdue", exportDate: new Date(Date.now() + 3600_000).toISOString() }));
        assert.ok((await item(overdue.workItemId)).deadlineAt! < new Date().toISOString());

        await setConfig(sim, { outage: true });
        await run();
        await sleep(60);
        await run();
        assert.deepEqual(await t.outboxEvents(overdue.workItemId), ["workitem.deadline_at_risk"], "once, however many passes");
        assert.deepEqual(await t.outboxEvents(late.workItemId), []);

        await setConfig(sim, { outage: false });
        await sleep(100);
        const calls = recording(createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 }));
        await run({ adapter: calls.adapter });
        await calls.adapter.close();
        const order = calls.calls.filter((c) => c.kind === "submit").map((c) => Number(c.subject));
        assert.deepEqual(order, [soon, middle, late, overdue].map((k) => k.workItemId), "on time by earliest deadline, then the late one (SPEC §14)");
        assert.deepEqual(await t.outboxEvents(overdue.workItemId), ["workitem.deadline_at_risk", "workitem.succeeded"]);
      }));
  });
}
