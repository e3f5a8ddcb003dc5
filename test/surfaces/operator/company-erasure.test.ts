/**
 * A company's export and erase through the operator API (SPEC §22), on both stores: admin only;
 * the export streams JSON Lines, each line the item's operator view; the erase revokes the keys
 * before it answers, the worker's runner carries it to its end in bounded steps, the erases under
 * way are listed until then, and the audit log has its one entry; a second erase is a 404 saying
 * when it was erased. Every statement names its company (checked at the end).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startErasureRunner } from "../../../src/admin/company-erasure.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { createTestOperator } from "../../helpers/operators.ts";
import { recordStoreStatements } from "../../helpers/statement-recorder.ts";
import { bearer, problem, validWorkItem } from "../../helpers/test-app.ts";
import { waitUntil } from "../../helpers/waiting.ts";
import { withWebhooks } from "../../helpers/webhook-harness.ts";

recordStoreStatements();

const quietLogger = { info: () => undefined, warn: () => undefined };

for (const backend of await availableBackends()) {
  describe(`company export and erase in the operator API [${backend.name}]`, { timeout: 120_000 }, () => {
    test("admin only; the export streams each item as the API shows it; the erase revokes at once and the worker ends it", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const other = await s.t.tenant(12);
        const [admin, operator, viewer] = [await createTestOperator(s.t.store, "admin"), await createTestOperator(s.t.store, "operator"), await createTestOperator(s.t.store, "viewer")];
        const filed = await s.complete(validWorkItem({ customerReference: "FILED" }));
        await s.dispatcher().deliverDue();
        const waiting = (await s.t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(s.tenant.token), payload: validWorkItem() })).json<{ workItemId: number }>();
        await s.complete(validWorkItem({ customerReference: "THEIRS" }), undefined, other);
        const erase = (token: string, companyId = 11, reason: unknown = "the company left") =>
          s.t.app.inject({ method: "POST", url: `/api/Operator/Companies/${companyId}/Erase`, headers: bearer(token), payload: { reason } });
        const exportOf = (token: string, query = "", companyId = 11) => s.t.app.inject({ url: `/api/Operator/Companies/${companyId}/Export${query}`, headers: bearer(token) });

        for (const token of [operator.token, viewer.token]) {
          assert.equal((await erase(token)).statusCode, 403);
          assert.equal((await exportOf(token)).statusCode, 403);
        }
        assert.equal((await erase(admin.token, 11, "")).statusCode, 400, "a reason is required");
        assert.equal((await exportOf(admin.token, "?since=last-week")).statusCode, 400);
        assert.equal((await exportOf(admin.token, "", 99)).statusCode, 404);

        const exported = await exportOf(admin.token);
        assert.equal(exported.statusCode, 200, exported.body);
        assert.match(String(exported.headers["content-type"]), /^application\/x-ndjson/);
        const lines = exported.body.trimEnd().split("\n").map((line) => JSON.parse(line) as { workItemId: number });
        assert.deepEqual(lines.map((line) => line.workItemId), [filed.workItemId, waiting.workItemId]);
        for (const line of lines) assert.deepEqual(line, (await s.t.app.inject({ url: `/api/Operator/WorkItems/${line.workItemId}`, headers: bearer(admin.token) })).json());
        assert.equal((await exportOf(admin.token, `?since=${new Date(Date.now() + 60_000).toISOString()}`)).body, "", "nothing added since then");

        const begun = await erase(admin.token);
        assert.equal(begun.statusCode, 202, begun.body);
        const erasure = begun.json<{ companyId: number; phase: string; keysRevokedAt: string | null; operator: { email: string }; reason: string }>();
        assert.deepEqual([erasure.companyId, erasure.phase, erasure.operator.email, erasure.reason], [11, "draining", admin.email, "the company left"]);
        assert.ok(erasure.keysRevokedAt, "revoked before the answer");
        assert.equal((await s.t.app.inject({ url: "/api/AuthorityRvdm/WorkItems", headers: bearer(s.tenant.token) })).statusCode, 401, "this process refuses the token at once");
        assert.equal((await erase(admin.token, 11, "again")).json<{ reason: string }>().reason, "the company left", "asked again: the erase under way");
        const listed = (await s.t.app.inject({ url: "/api/Operator/Erasures", headers: bearer(viewer.token) })).json<{ erasures: Array<{ companyId: number }> }>();
        assert.deepEqual(listed.erasures.map((e) => e.companyId), [11], "under way, for every role to see");
        const overview = await s.t.app.inject({ url: "/api/Operator/Overview", headers: bearer(admin.token) });
        assert.equal(overview.statusCode, 200);

        const runner = startErasureRunner({ store: s.t.store, logger: quietLogger, intervalMs: 50 });
        try {
          await waitUntil("the worker ends the erase", async () => (await s.t.store.companyErasures()).length === 0, 30_000);
        } finally {
          await runner.stop();
        }
        const audit = (await s.t.app.inject({ url: "/api/Operator/Audit", headers: bearer(viewer.token) })).json<{ entries: Array<{ action: string; target: { companyId: number }; items: number | null; operator: { email: string }; reason: string }> }>();
        const entry = audit.entries.find((e) => e.action === "company.erased");
        assert.deepEqual(entry && [entry.target.companyId, entry.items, entry.operator.email, entry.reason], [11, 2, admin.email, "the company left"]);
        assert.deepEqual(await s.t.query("SELECT work_item_id FROM work_items WHERE company_id = 11"), []);
        assert.equal((await s.t.query("SELECT work_item_id FROM work_items WHERE company_id = 12")).length, 1, "the other company's item stays");
        const again = await erase(admin.token);
        assert.equal(again.statusCode, 404);
        assert.match(problem(again).detail ?? "", /^Company 11 was erased at .*; nothing is left of it\.$/);
        assert.equal((await exportOf(admin.token)).statusCode, 404);
      }));
  });
}
