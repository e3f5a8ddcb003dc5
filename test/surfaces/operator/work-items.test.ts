/**
 * The operator API's work item routes (SPEC §12.2) on each store: the list across companies with
 * its filters and keyset cursor, one item with its timeline, Retry and Cancel with their reasons
 * in the audit log and the timeline, `workitem.retried` in the company's event feed, and the
 * 400/404/409 answers.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { InjectOptions } from "fastify";
import type { OperatorWorkItemView, TimelineEntry } from "../../../src/store/store.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { runOneBotPass } from "../../helpers/bot-harness.ts";
import { createTestOperator, type TestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

const REJECTED = { senderChamberOfCommerceNo: { sendValue: "123" } };
type Page = { items: OperatorWorkItemView[]; nextCursor: string | null };
type Detail = OperatorWorkItemView & { timeline: TimelineEntry[] };
type Audit = { entries: Array<{ action: string; reason: string; operator: { email: string }; target: Record<string, unknown> }> };

for (const backend of await availableBackends()) {
  describe(`operator work items [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let t: TestApp;
    let acme: Tenant;
    let beta: Tenant;
    let ops: TestOperator;
    const ids = { succeeded: 0, acmeFailed: 0, betaFailed: 0, betaNew: 0 };

    const add = async (tenant: Tenant, body: Record<string, unknown>) => {
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: body });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ workItemId: number; workBatchId: number }>();
    };
    const asOps = (options: InjectOptions) => t.app.inject({ ...options, headers: { ...bearer(ops.token), ...options.headers } });
    const get = async <T>(url: string) => {
      const response = await asOps({ url });
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.match(String(response.headers["content-type"]), /^application\/json; charset=utf-8/);
      return response.json<T>();
    };
    const post = (url: string, payload: unknown) => asOps({ method: "POST", url, payload: payload as InjectOptions["payload"] });

    before(async () => {
      t = await createTestApp(backend);
      acme = await t.tenant(2201);
      beta = await t.tenant(2202);
      ops = await createTestOperator(t.store, "operator");
      ids.succeeded = (await add(acme, validWorkItem({ customerReference: "ACME-OK" }))).workItemId;
      ids.acmeFailed = (await add(acme, validWorkItem({ customerReference: "ACME-BAD", ...REJECTED }))).workItemId;
      ids.betaFailed = (await add(beta, validWorkItem({ customerReference: "BETA-BAD", ...REJECTED }))).workItemId;
      await runOneBotPass(t);
      ids.betaNew = (await add(beta, validWorkItem({ customerReference: "BETA-NEW" }))).workItemId;
    });
    after(() => t.close());

    test("the list shows every company's items, newest first, each with its companyId", async () => {
      const page = await get<Page>("/api/Operator/WorkItems");
      assert.deepEqual(
        page.items.map((item) => [item.workItemId, item.companyId, item.status]),
        [
          [ids.betaNew, beta.companyId, "New"],
          [ids.betaFailed, beta.companyId, "Failed"],
          [ids.acmeFailed, acme.companyId, "Failed"],
          [ids.succeeded, acme.companyId, "Successful"],
        ],
      );
      assert.equal(page.nextCursor, null);
      assert.equal(page.items[0]!.customerReference, "BETA-NEW");
    });

    test("the filters: company, status, customer reference, the authority's numbers, deadline", async () => {
      const idsOf = async (query: string) => (await get<Page>(`/api/Operator/WorkItems?${query}`)).items.map((item) => item.workItemId);
      assert.deepEqual(await idsOf(`companyId=${acme.companyId}`), [ids.acmeFailed, ids.succeeded]);
      assert.deepEqual(await idsOf("status=Failed"), [ids.betaFailed, ids.acmeFailed]);
      assert.deepEqual(await idsOf(`status=Failed&companyId=${beta.companyId}`), [ids.betaFailed]);
      assert.deepEqual(await idsOf("customerReference=ACME-OK"), [ids.succeeded]);
      const succeeded = await get<Detail>(`/api/Operator/WorkItems/${ids.succeeded}`);
      assert.ok(succeeded.authority.applicationNumber && succeeded.authority.registrationNumber);
      assert.deepEqual(await idsOf(`applicationNumber=${encodeURIComponent(succeeded.authority.applicationNumber)}`), [ids.succeeded]);
      assert.deepEqual(await idsOf(`registrationNumber=${encodeURIComponent(succeeded.authority.registrationNumber)}`), [ids.succeeded]);
      assert.deepEqual(await idsOf("registrationNumber=NO-SUCH-NUMBER"), []);
      assert.deepEqual(await idsOf(`deadlineBefore=${encodeURIComponent(succeeded.deadlineAt!)}`), []);
      assert.equal((await idsOf("deadlineBefore=2999-01-01T00:00:00Z")).length, 4);
    });

    test("pages follow the keyset cursor without gaps or repeats", async () => {
      const seen: number[] = [];
      let url = "/api/Operator/WorkItems?limit=3";
      for (;;) {
        const page = await get<Page>(url);
        seen.push(...page.items.map((item) => item.workItemId));
        if (!page.nextCursor) break;
        url = `/api/Operator/WorkItems?limit=3&cursor=${page.nextCursor}`;
      }
      assert.deepEqual(seen, [ids.betaNew, ids.betaFailed, ids.acmeFailed, ids.succeeded]);
    });

    test("bad filters are 400 problems naming the field", async () => {
      for (const [query, field] of [
        ["limit=0", "limit"],
        ["limit=501", "limit"],
        ["status=Lost", "status"],
        ["cursor=bm9wZQ", "cursor"],
        ["companyId=abc", "companyId"],
        ["deadlineBefore=yesterday", "deadlineBefore"],
      ] as const) {
        const response = await asOps({ url: `/api/Operator/WorkItems?${query}` });
        assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
        assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
        assert.ok(problem(response).errors?.[field], `${query}: ${response.body}`);
      }
    });

    test("one item carries its companyId and its timeline, oldest first; unknown ids are 404", async () => {
      const item = await get<Detail>(`/api/Operator/WorkItems/${ids.acmeFailed}`);
      assert.equal(item.companyId, acme.companyId);
      assert.equal(item.status, "Failed");
      assert.ok(item.error?.code);
      assert.equal(item.timeline[0]!.kind, "created");
      assert.ok(item.timeline.some((entry) => entry.kind === "status" && entry.status === "Failed"));
      const times = item.timeline.map((entry) => entry.at);
      assert.deepEqual(times, [...times].sort());
      for (const entry of item.timeline) assert.deepEqual(Object.keys(entry).sort(), ["at", "detail", "kind", "operator", "reason", "status"]);
      const missing = await asOps({ url: "/api/Operator/WorkItems/987654321" });
      assert.equal(missing.statusCode, 404);
      assert.equal(problem(missing).detail, "Work item 987654321 does not exist.");
      assert.equal((await asOps({ url: "/api/Operator/WorkItems/abc" })).statusCode, 400);
    });

    test("a reason of 1–500 characters is required; without one nothing changes", async () => {
      const url = `/api/Operator/WorkItems/${ids.acmeFailed}/Retry`;
      for (const body of [{}, { reason: "" }, { reason: "x".repeat(501) }, { reason: 7 }, { reason: "ok", extra: true }]) {
        const response = await post(url, body);
        assert.equal(response.statusCode, 400, `${JSON.stringify(body).slice(0, 40)}: ${response.body}`);
        assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
        assert.ok(Object.keys(problem(response).errors ?? {}).length > 0);
      }
      const notJson = await asOps({ method: "POST", url, headers: { "content-type": "text/plain" }, payload: "reason" });
      assert.equal(notJson.statusCode, 415);
      const malformed = await asOps({ method: "POST", url, headers: { "content-type": "application/json" }, payload: "{" });
      assert.equal(malformed.statusCode, 400);
      assert.equal((await get<Detail>(`/api/Operator/WorkItems/${ids.acmeFailed}`)).status, "Failed");
    });

    test("Retry: the Failed item is New again with attempts reset, in an Open batch, with audit, timeline and workitem.retried", async () => {
      const before = await get<Detail>(`/api/Operator/WorkItems/${ids.acmeFailed}`);
      const reason = "authority fixed its validation; resubmitting";
      const response = await post(`/api/Operator/WorkItems/${ids.acmeFailed}/Retry`, { reason });
      assert.equal(response.statusCode, 200, response.body);
      const retried = response.json<OperatorWorkItemView>();
      assert.equal(retried.status, "New");
      assert.equal(retried.attempts, 0);
      assert.equal(retried.companyId, acme.companyId);
      assert.notEqual(retried.workBatchId, before.workBatchId);
      const batch = (await t.app.inject({ url: `/api/AuthorityRvdm/WorkBatch/${retried.workBatchId}`, headers: bearer(acme.token) })).json<{ status: string }>();
      assert.equal(batch.status, "Open");
      const oldBatch = (await t.app.inject({ url: `/api/AuthorityRvdm/WorkBatch/${before.workBatchId}`, headers: bearer(acme.token) })).json<{ status: string }>();
      assert.equal(oldBatch.status, "Completed");

      const [entry] = (await get<Audit>("/api/Operator/Audit")).entries;
      assert.deepEqual(
        { action: entry!.action, reason: entry!.reason, email: entry!.operator.email, target: entry!.target },
        { action: "workitem.retry", reason, email: ops.email, target: { companyId: acme.companyId, workItemId: ids.acmeFailed, workType: "AuthorityRvdm", deliveryId: null } },
      );
      const { timeline } = await get<Detail>(`/api/Operator/WorkItems/${ids.acmeFailed}`);
      const action = timeline.find((step) => step.kind === "operator");
      assert.deepEqual(action && { reason: action.reason, operator: action.operator }, { reason, operator: { operatorId: ops.operatorId, email: ops.email } });
      assert.equal(timeline[timeline.length - 1]!.status, "New");

      const feed = (await t.app.inject({ url: "/api/Events?type=workitem.retried", headers: bearer(acme.token) })).json<{ events: Array<{ data: { workItemId: number; status: string } }> }>();
      assert.deepEqual(feed.events.map((event) => [event.data.workItemId, event.data.status]), [[ids.acmeFailed, "New"]]);
      const otherFeed = (await t.app.inject({ url: "/api/Events?type=workitem.retried", headers: bearer(beta.token) })).json<{ events: unknown[] }>();
      assert.deepEqual(otherFeed.events, [], "another company's feed does not show it");
    });

    test("Retry is a 409 unless the item is Failed, and a 404 for an unknown id", async () => {
      for (const workItemId of [ids.acmeFailed, ids.succeeded, ids.betaNew]) {
        const response = await post(`/api/Operator/WorkItems/${workItemId}/Retry`, { reason: "again" });
        assert.equal(response.statusCode, 409, response.body);
        assert.match(problem(response).detail, /only a Failed item can be retried/);
      }
      const missing = await post("/api/Operator/WorkItems/987654321/Retry", { reason: "again" });
      assert.equal(missing.statusCode, 404);
    });

    test("Cancel: a New item in an Open batch of any company is Cancelled, with its audit entry; anything else 409; unknown 404", async () => {
      const response = await post(`/api/Operator/WorkItems/${ids.betaNew}/Cancel`, { reason: "customer withdrew the order" });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual([response.json<OperatorWorkItemView>().status, response.json<OperatorWorkItemView>().companyId], ["Cancelled", beta.companyId]);
      const integratorView = (await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${ids.betaNew}`, headers: bearer(beta.token) })).json<{ status: string }>();
      assert.equal(integratorView.status, "Cancelled");
      const [entry] = (await get<Audit>("/api/Operator/Audit")).entries;
      assert.deepEqual([entry!.action, entry!.reason, entry!.target.workItemId], ["workitem.cancel", "customer withdrew the order", ids.betaNew]);

      for (const workItemId of [ids.betaNew, ids.succeeded]) {
        const conflict = await post(`/api/Operator/WorkItems/${workItemId}/Cancel`, { reason: "again" });
        assert.equal(conflict.statusCode, 409, conflict.body);
      }
      assert.equal((await post("/api/Operator/WorkItems/987654321/Cancel", { reason: "again" })).statusCode, 404);
    });
  });
}
