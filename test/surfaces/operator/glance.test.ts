/**
 * The operator API's part of the console at a glance (SPEC §16) on each store: Overview.throughput
 * (24 hours, oldest first, each hour's items filed, succeeded and failed and deliveries given up,
 * counted in the hour they happened: a second bot pass runs on a clock five hours ahead, and the
 * overview is built as of then) and each company's overdue items; Stop retrying a
 * delivery: 200 with it failed, 409 once it is not pending, 404 unknown, 400 without a reason,
 * and the audit entry delivery.stop.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../../src/domain/views.ts";
import { buildOverview, type Overview } from "../../../src/operators/overview.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { runOneBotPass } from "../../helpers/bot-harness.ts";
import { createTestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, validWorkItem } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

const HOUR_MS = 3_600_000;

for (const backend of await availableBackends()) {
  describe(`operator glance [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("Overview.throughput: 24 hours oldest first, each outcome in the hour it happened; companies' overdue", async () => {
      const t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      try {
        const tenant = await t.tenant(2501);
        const ops = await createTestOperator(t.store, "viewer");
        const add = async (overrides: Record<string, unknown> = {}) => {
          const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem(overrides) });
          assert.equal(response.statusCode, 200, response.body);
          return response.json<{ workItemId: number }>().workItemId;
        };
        await add();
        await runOneBotPass(t);
        await add();
        await add({ senderChamberOfCommerceNo: { sendValue: "1234567" } });
        await runOneBotPass(t, () => new Date(Date.now() + 5 * HOUR_MS));
        const later = new Date(Date.now() + 5 * HOUR_MS);
        const overdue = new Date(later.getTime() - HOUR_MS).toISOString();
        await t.store.addWorkItems({
          companyId: tenant.companyId,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          batchMaxItems: t.config.batchMaxItems,
          items: [1, 2].map((n) => ({ customerReference: `LATE-${n}`, documentReference: null, webhookUrl: null, request: validWorkItem({ customerReference: `LATE-${n}` }), deadlineAt: overdue })),
        });

        const response = await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) });
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.json<Overview>().throughput.length, 24);
        const overview = await buildOverview(t.store, t.config, new Date(later.getTime() + 60_000));
        const { throughput } = overview;
        assert.equal(throughput.length, 24);
        const thisHour = Math.floor((later.getTime() + 60_000) / HOUR_MS) * HOUR_MS;
        assert.deepEqual(throughput.map((entry) => Date.parse(entry.hour)), Array.from({ length: 24 }, (_, index) => thisHour - (23 - index) * HOUR_MS), "UTC hour starts, oldest first");
        // The first pass ran five hours (or, across an hour's end, six) before the second.
        const first = throughput.findIndex((entry) => entry.submitted > 0);
        assert.ok(first === 17 || first === 18, String(first));
        assert.deepEqual(throughput[first], { hour: new Date(thisHour - (23 - first) * HOUR_MS).toISOString(), submitted: 1, succeeded: 1, failed: 0, deliveriesFailed: 0, deliveryAttemptsFailed: 0 });
        const second = throughput.findLastIndex((entry) => entry.failed > 0);
        assert.ok(second >= 22, String(second));
        assert.deepEqual({ ...throughput[second]!, hour: "", submitted: 0 }, { hour: "", submitted: 0, succeeded: 1, failed: 1, deliveriesFailed: 0, deliveryAttemptsFailed: 0 }, "the second pass's success and rejection");
        assert.equal(throughput.reduce((sum, entry) => sum + entry.succeeded, 0), 2);
        assert.equal(overview.companies.find((company) => company.companyId === tenant.companyId)?.overdue, 2);
      } finally {
        await t.close();
      }
    });

    test("Stop retrying: the pending delivery fails now, once; audited as delivery.stop; counted in the hour's deliveriesFailed", async () => {
      const t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      try {
        const tenant = await t.tenant(2502);
        const ops = await createTestOperator(t.store, "operator");
        const payload = validWorkItem({ webhookUrl: "http://127.0.0.1:9/hooks" });
        assert.equal((await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload })).statusCode, 200);
        await runOneBotPass(t);
        const [row] = await t.query<{ delivery_id: number | string }>("SELECT delivery_id FROM webhook_outbox WHERE company_id = $1", [tenant.companyId]);
        const deliveryId = Number(row!.delivery_id);
        const stop = (id: number, body: Record<string, unknown>) =>
          t.app.inject({ method: "POST", url: `/api/Operator/Webhooks/Deliveries/${id}/Stop`, headers: bearer(ops.token), payload: body });

        assert.equal((await stop(deliveryId, {})).statusCode, 400, "a reason is required");
        const stopped = await stop(deliveryId, { reason: "receiver.invalid does not resolve" });
        assert.equal(stopped.statusCode, 200, stopped.body);
        const view = stopped.json<{ deliveryId: number; companyId: number; status: string; nextAttemptAt: string | null }>();
        assert.deepEqual([view.deliveryId, view.companyId, view.status, view.nextAttemptAt], [deliveryId, tenant.companyId, "failed", null]);

        const again = await stop(deliveryId, { reason: "twice" });
        assert.equal(again.statusCode, 409, again.body);
        assert.match(String(again.headers["content-type"]), /application\/problem\+json/);
        assert.equal((await stop(987_654_321, { reason: "x" })).statusCode, 404);
        const due = await t.store.claimWebhookDeliveries({ companyId: tenant.companyId, owner: "d", now: new Date(Date.now() + 86_400_000).toISOString(), leaseExpiresAt: new Date(Date.now() + 90_000_000).toISOString(), limit: 10, maxInFlight: 10 });
        assert.deepEqual(due, [], "a stopped delivery is never attempted again");

        const audit = (await t.app.inject({ url: "/api/Operator/Audit", headers: bearer(ops.token) })).json<{ entries: Array<{ action: string; reason: string; target: Record<string, unknown> }> }>();
        assert.deepEqual(audit.entries.map((entry) => [entry.action, entry.reason, entry.target.deliveryId, entry.target.companyId]), [
          ["delivery.stop", "receiver.invalid does not resolve", deliveryId, tenant.companyId],
        ]);
        const overview = (await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) })).json<Overview>();
        assert.equal(overview.throughput.at(-1)!.deliveriesFailed, 1);
      } finally {
        await t.close();
      }
    });
  });
}
