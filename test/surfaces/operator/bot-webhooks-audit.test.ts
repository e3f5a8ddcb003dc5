/**
 * The rest of the operator API (SPEC §12.2) on each store: Pause stops the bot filing a work type
 * (intake goes on) and Resume lets it file again; Redeliver for a delivery of any company; the
 * Overview; the audit log, newest first, paged with its cursor.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Overview } from "../../../src/operators/overview.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { runOneBotPass, withBot } from "../../helpers/bot-harness.ts";
import { createTestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

type AuditPage = { entries: Array<{ auditId: number; action: string; reason: string; target: Record<string, unknown> }>; nextCursor: string | null };

for (const backend of await availableBackends()) {
  describe(`operator bot, webhooks and audit [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("Pause: the bot files nothing of that work type and intake goes on; Resume: it files again", () =>
      withBot(backend, {}, async (s) => {
        const ops = await createTestOperator(s.t.store, "operator");
        const call = (url: string, payload: Record<string, unknown>) => s.t.app.inject({ method: "POST", url, headers: bearer(ops.token), payload });
        const overview = async () => (await s.t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) })).json<Overview>();

        const paused = await call("/api/Operator/Bot/Pause", { workType: "AuthorityRvdm", reason: "authority maintenance tonight" });
        assert.equal(paused.statusCode, 200, paused.body);
        assert.deepEqual(paused.json(), { workType: "AuthorityRvdm", paused: true });
        assert.deepEqual((await overview()).bot.pausedWorkTypes, ["AuthorityRvdm"]);

        const { workItemId } = await s.add(validWorkItem());
        const whilePaused = await s.run();
        assert.equal(whilePaused.submitted, 0);
        assert.equal(s.sim.stats().requests, 0, "nothing reached the authority");
        assert.equal((await s.item(workItemId)).status, "New");

        const resumed = await call("/api/Operator/Bot/Resume", { workType: "AuthorityRvdm", reason: "maintenance over" });
        assert.deepEqual(resumed.json(), { workType: "AuthorityRvdm", paused: false });
        assert.deepEqual((await overview()).bot.pausedWorkTypes, []);
        await s.run();
        assert.equal((await s.item(workItemId)).status, "Successful");

        const audit = (await s.t.app.inject({ url: "/api/Operator/Audit", headers: bearer(ops.token) })).json<AuditPage>();
        assert.deepEqual(
          audit.entries.map((entry) => [entry.action, entry.reason, entry.target.workType]),
          [
            ["bot.resume", "maintenance over", "AuthorityRvdm"],
            ["bot.pause", "authority maintenance tonight", "AuthorityRvdm"],
          ],
        );

        for (const body of [{ workType: "VlmMad", reason: "x" }, { workType: "Nope", reason: "x" }, { workType: "AuthorityRvdm" }, { reason: "x" }]) {
          const refused = await call("/api/Operator/Bot/Pause", body);
          assert.equal(refused.statusCode, 400, `${JSON.stringify(body)}: ${refused.body}`);
          assert.ok(Object.keys(problem(refused).errors ?? {}).length > 0);
        }
        assert.deepEqual((await overview()).bot.pausedWorkTypes, []);
      }));

    test("Redeliver, Overview and the audit log", async () => {
      const t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      try {
        const tenant = await t.tenant(2401);
        const ops = await createTestOperator(t.store, "operator");
        const asOps = bearer(ops.token);
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ webhookUrl: "http://127.0.0.1:9/hooks" }) });
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ senderChamberOfCommerceNo: { sendValue: "1" } }) });
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });
        await runOneBotPass(t);
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });

        const overview = (await t.app.inject({ url: "/api/Operator/Overview", headers: asOps })).json<Overview>();
        const company = overview.companies.find((entry) => entry.companyId === tenant.companyId);
        assert.deepEqual(company && { counts: company.counts, openBatchItems: company.openBatchItems, failedLast24h: company.failedLast24h, pending: company.pendingWebhookDeliveries }, {
          counts: { new: 1, inProgress: 0, submitted: 0, successful: 2, failed: 1, cancelled: 0, withdrawn: 0 },
          openBatchItems: 1,
          failedLast24h: 1,
          pending: 1,
        });
        assert.ok(company!.oldestNewAt);
        assert.ok(overview.bot.lastPass && overview.bot.lastPass.succeeded === 2 && overview.bot.lastPass.failed === 1, JSON.stringify(overview.bot));
        assert.ok(overview.bot.nextPassAt && Date.parse(overview.bot.nextPassAt) > Date.now() - 1000);
        assert.equal(overview.bot.breaker, "closed");

        const [delivery] = await t.query<{ delivery_id: number | string }>("SELECT delivery_id FROM webhook_outbox WHERE company_id = $1", [tenant.companyId]);
        const deliveryId = Number(delivery!.delivery_id);
        const redeliver = (id: number, payload: Record<string, unknown>) =>
          t.app.inject({ method: "POST", url: `/api/Operator/Webhooks/Deliveries/${id}/Redeliver`, headers: asOps, payload });
        const accepted = await redeliver(deliveryId, { reason: "receiver was down" });
        assert.equal(accepted.statusCode, 202, accepted.body);
        const view = accepted.json<{ deliveryId: number; companyId: number; status: string; nextAttemptAt: string | null }>();
        assert.deepEqual([view.deliveryId, view.companyId, view.status], [deliveryId, tenant.companyId, "pending"]);
        assert.ok(view.nextAttemptAt);
        assert.equal((await redeliver(987654321, { reason: "x" })).statusCode, 404);
        assert.equal((await redeliver(deliveryId, {})).statusCode, 400);

        await t.app.inject({ method: "POST", url: "/api/Operator/Bot/Pause", headers: asOps, payload: { workType: "AuthorityRvdm", reason: "one" } });
        await t.app.inject({ method: "POST", url: "/api/Operator/Bot/Resume", headers: asOps, payload: { workType: "AuthorityRvdm", reason: "two" } });
        const seen: AuditPage["entries"] = [];
        let url = "/api/Operator/Audit?limit=1";
        for (let pages = 0; pages < 10; pages++) {
          const page = (await t.app.inject({ url, headers: asOps })).json<AuditPage>();
          seen.push(...page.entries);
          if (!page.nextCursor) break;
          url = `/api/Operator/Audit?limit=1&cursor=${page.nextCursor}`;
        }
        assert.deepEqual(seen.map((entry) => [entry.action, entry.reason]), [["bot.resume", "two"], ["bot.pause", "one"], ["delivery.redeliver", "receiver was down"]]);
        assert.deepEqual(seen[2]!.target, { companyId: tenant.companyId, workItemId: null, workType: null, deliveryId });
        const ids = seen.map((entry) => entry.auditId);
        assert.deepEqual(ids, [...ids].sort((a, b) => b - a), "newest first");
        for (const query of ["limit=0", "limit=501", "cursor=bm9wZQ"]) {
          assert.equal((await t.app.inject({ url: `/api/Operator/Audit?${query}`, headers: asOps })).statusCode, 400, query);
        }
      } finally {
        await t.close();
      }
    });
  });
}
