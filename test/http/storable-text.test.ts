/**
 * Issue 36, defects 1–3 (SPEC §20), on both stores:
 * - U+0000 or a lone surrogate anywhere in a body answered 200 and then broke the item, its
 *   original and every list page that held it on PostgreSQL. Now each is a 400 naming the field,
 *   and nothing is stored;
 * - a change could replace the original's customerReference, documentReference or webhookUrl;
 * - a NUL in an operator's reason answered 500 on PostgreSQL. Now a 400, with nothing audited.
 * And from issue 45 (SPEC §24): in a bulk add, such text is the item's own 400 result.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type Tenant, type TestApp } from "../helpers/test-app.ts";

const NUL_MESSAGE = "must not contain U+0000";
const SURROGATE_MESSAGE = "must not contain an unpaired surrogate (U+D800–U+DFFF)";
const LONE = "\ud800";

for (const backend of await availableBackends()) {
  describe(`text the stores cannot hold, and fields a change may not touch [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let originalId: number;
    let operatorToken: string;

    const post = (path: string, body: unknown) =>
      t.app.inject({ method: "POST", url: `/api/AuthorityRvdm/${path}`, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: JSON.stringify(body) });
    const refusedNaming = (response: Awaited<ReturnType<typeof post>>, field: string, message: string) => {
      assert.equal(response.statusCode, 400, response.body);
      assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
      assert.deepEqual(problem(response).errors?.[field], [message], `${field}: ${response.body}`);
    };
    const workItemCount = async () => Number((await t.query<{ n: number }>("SELECT count(*) AS n FROM work_items"))[0]!.n);
    const original = async () => {
      const response = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${originalId}`, headers: bearer(tenant.token) });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ request: Record<string, unknown>; revision: number }>();
    };

    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(3601);
      operatorToken = (await createTestOperator(t.store, "admin")).token;
      const added = await post("AddWorkItemCreate", validWorkItem({ customerReference: "KEEP-ME", documentReference: "DOC-1" }));
      assert.equal(added.statusCode, 200, added.body);
      originalId = added.json<{ workItemId: number }>().workItemId;
    });
    after(() => t.close());

    test("a create with U+0000 or a lone surrogate in any string, or in a name, is a 400 naming it, and nothing is stored", async () => {
      const before = await workItemCount();
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ note: { sendValue: "a\u0000b" } }, "note.sendValue", NUL_MESSAGE],
        [{ note: { sendValue: `a${LONE}b` } }, "note.sendValue", SURROGATE_MESSAGE],
        [{ productName: { sendValue: "MEST", documentValue: `x${LONE}` } }, "productName.documentValue", SURROGATE_MESSAGE],
        [{ productName: { sendValue: "\u0000" } }, "productName.sendValue", NUL_MESSAGE],
        [{ certificateType: { sendValue: "EXPORT", documentValue: "\udfff tail" } }, "certificateType.documentValue", SURROGATE_MESSAGE],
        [{ "no\u0000te": { sendValue: "x" } }, "no\\u0000te", `the property name ${NUL_MESSAGE}`],
        [{ [`n${LONE}`]: { sendValue: "x" } }, "n\\uD800", `the property name ${SURROGATE_MESSAGE}`],
      ];
      for (const [overrides, field, message] of cases) {
        refusedNaming(await post("AddWorkItemCreate", validWorkItem(overrides)), field, message);
      }
      assert.equal(await workItemCount(), before, "no item was stored");

      // A paired surrogate (an emoji) is text like any other, and an escaped backslash before "u0000" is no NUL.
      const emoji = await post("AddWorkItemCreate", validWorkItem({ note: { sendValue: "mest 🐄", documentValue: "\\u0000 is not a NUL" } }));
      assert.equal(emoji.statusCode, 200, emoji.body);
      const list = await t.app.inject({ url: "/api/AuthorityRvdm/WorkItems?limit=100", headers: bearer(tenant.token) });
      assert.equal(list.statusCode, 200, list.body);
    });

    test("a bulk add gives an item with such text a 400 result of its own and stores the others; allOrNothing refuses the whole request (SPEC §24)", async () => {
      const items = [
        validWorkItem({ customerReference: "BULK-0" }),
        validWorkItem({ note: { sendValue: "a\u0000b" } }),
        validWorkItem({ customerReference: "BULK-2" }),
        validWorkItem({ [`n${LONE}`]: { sendValue: "x" }, productName: { sendValue: "MEST", documentValue: `x${LONE}` } }),
        validWorkItem({ customerReference: "BULK-4" }),
      ];
      const before = await workItemCount();
      const all = await post("AddWorkItemCreateBulk", { items, allOrNothing: true });
      refusedNaming(all, "items[1].note.sendValue", NUL_MESSAGE);
      refusedNaming(all, "items[3].productName.documentValue", SURROGATE_MESSAGE);
      refusedNaming(all, "items[3].n\\uD800", `the property name ${SURROGATE_MESSAGE}`);
      assert.equal(await workItemCount(), before, "allOrNothing: nothing stored");

      const bulk = await post("AddWorkItemCreateBulk", { items });
      assert.equal(bulk.statusCode, 200, bulk.body);
      const results = bulk.json<{ results: Array<{ index: number; status?: number; workItemId?: number; errors?: Record<string, string[]> }> }>().results;
      assert.deepEqual(results.map((result) => result.status ?? "stored"), ["stored", 400, "stored", 400, "stored"]);
      assert.deepEqual(results[1]!.errors, { "note.sendValue": [NUL_MESSAGE] });
      assert.deepEqual(results[3]!.errors, { "n\\uD800": [`the property name ${SURROGATE_MESSAGE}`], "productName.documentValue": [SURROGATE_MESSAGE] });
      assert.equal(await workItemCount(), before + 3, "the three sound items are stored");
      for (const index of [0, 2, 4]) {
        const read = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${results[index]!.workItemId}`, headers: bearer(tenant.token) });
        assert.equal(read.statusCode, 200, read.body);
      }

      // Outside the items, such text still refuses the whole request.
      refusedNaming(await post("AddWorkItemCreateBulk", { items: [validWorkItem()], "all\u0000OrNothing": true }), "all\\u0000OrNothing", `the property name ${NUL_MESSAGE}`);
      assert.equal(await workItemCount(), before + 3);
    });

    test("a change with such text in `changes` is a 400 naming it; the original is unchanged and readable", async () => {
      const was = await original();
      refusedNaming(await post("AddWorkItemChange", { originalWorkItemId: originalId, customerReference: "C-1", changes: { note: { sendValue: "a\u0000b" } } }), "changes.note.sendValue", NUL_MESSAGE);
      refusedNaming(await post("AddWorkItemChange", { originalWorkItemId: originalId, customerReference: "C-1", changes: { plannedLoad: 3, requestNo: { sendValue: LONE } } }), "changes.requestNo.sendValue", SURROGATE_MESSAGE);
      refusedNaming(await post("AddWorkItemWithdraw", { originalWorkItemId: originalId, customerReference: "W-1", reason: "called \u0000 off" }), "reason", NUL_MESSAGE);
      assert.deepEqual(await original(), was);
    });

    test("a change may not name customerReference, documentReference or webhookUrl, in any shape or letter case", async () => {
      const was = await original();
      const message = "cannot be changed; it belongs to the work item, not to its document";
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ customerReference: { sendValue: "NEW" } }, "changes.customerReference"],
        [{ customerReference: "NEW" }, "changes.customerReference"],
        [{ customerReference: null, plannedLoad: 2 }, "changes.customerReference"],
        [{ CustomerReference: { sendValue: "NEW" } }, "changes.customerReference"],
        [{ documentReference: { sendValue: "NEW" } }, "changes.documentReference"],
        [{ DOCUMENTREFERENCE: "NEW" }, "changes.documentReference"],
        [{ webhookUrl: "http://127.0.0.1:9/steal" }, "changes.webhookUrl"],
        [{ WebhookUrl: { sendValue: "http://169.254.169.254/" } }, "changes.webhookUrl"],
      ];
      for (const [changes, field] of cases) {
        refusedNaming(await post("AddWorkItemChange", { originalWorkItemId: originalId, customerReference: "C-2", changes }), field, message);
      }
      const now = await original();
      assert.deepEqual(now, was, "nothing of the original changed");
      // A sound change still applies.
      const changed = await post("AddWorkItemChange", { originalWorkItemId: originalId, customerReference: "C-3", changes: { plannedLoad: 12 } });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal((await original()).request.plannedLoad, 12);
    });

    test("a NUL in an operator's reason is a 400 on every action, through the API and the console, and nothing is audited", async () => {
      const operatorPost = (url: string, body: unknown) =>
        t.app.inject({ method: "POST", url, headers: { ...bearer(operatorToken), "content-type": "application/json" }, payload: JSON.stringify(body) });
      const reason = "maintenance \u0000 window";
      const routes: Array<[string, Record<string, unknown>]> = [
        [`/api/Operator/WorkItems/${originalId}/Cancel`, { reason }],
        [`/api/Operator/WorkItems/${originalId}/Retry`, { reason }],
        ["/api/Operator/WorkItems/Retry", { status: "Failed", reason }],
        ["/api/Operator/Bot/Pause", { workType: WORK_TYPE_AUTHORITY_RVDM, reason }],
        ["/api/Operator/Bot/Resume", { workType: WORK_TYPE_AUTHORITY_RVDM, reason }],
        ["/api/Operator/Webhooks/Deliveries/1/Stop", { reason }],
        ["/api/Operator/Webhooks/Deliveries/1/Redeliver", { reason }],
      ];
      for (const [url, body] of routes) {
        const response = await operatorPost(url, body);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.deepEqual(problem(response).errors?.reason, [NUL_MESSAGE], url);
      }

      const admin = await createOperatorAccount(t.store, { email: "nul-reason@example.com", role: "admin" });
      const client = await signedInClient(t.app, admin.email, admin.password);
      assert.equal((await client.get(`/console/work-items/${originalId}`)).statusCode, 200);
      for (const url of [`/console/work-items/${originalId}/cancel`, `/console/work-items/${originalId}/retry`, "/console/bot/pause", "/console/bot/resume", "/console/webhook-deliveries/1/stop"]) {
        const response = await client.post(url, { reason, workType: WORK_TYPE_AUTHORITY_RVDM });
        assert.equal(response.statusCode, 400, `${url}: ${response.body.slice(0, 300)}`);
      }

      const audit = await t.app.inject({ url: "/api/Operator/Audit", headers: bearer(operatorToken) });
      assert.equal(audit.statusCode, 200, audit.body);
      // The console's sign-in is audited (SPEC §19); no refused action is.
      const actions = audit.json<{ entries: Array<{ action: string }> }>().entries.map((entry) => entry.action);
      assert.deepEqual(actions.filter((action) => action !== "operator.signin"), [], "no action was audited");
      const item = await t.app.inject({ url: `/api/Operator/WorkItems/${originalId}`, headers: bearer(operatorToken) });
      assert.equal(item.json<{ status: string }>().status, "New", "the item was not cancelled");
    });
  });
}
