import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertForeignIdIsNotFound, assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";

for (const backend of await availableBackends()) {
  describe(`read routes [${backend.name}]`, () => {
    let t: TestApp;
    let owner: Tenant;
    let other: Tenant;
    const keys: Array<{ workBatchId: number; workItemId: number }> = [];

    before(async () => {
      t = await createTestApp(backend);
      owner = await t.tenant(301);
      other = await t.tenant(302);
      for (let i = 0; i < 5; i++) {
        const response = await t.app.inject({
          method: "POST",
          url: "/api/AuthorityRvdm/AddWorkItemCreate",
          headers: bearer(owner.token),
          payload: validWorkItem({ customerReference: i % 2 === 0 ? "even" : "odd" }),
        });
        keys.push(response.json());
      }
    });
    after(() => t.close());

    const get = (url: string, token = owner.token) => t.app.inject({ method: "GET", url, headers: bearer(token) });

    test("WorkItem/{id} returns the full view", async () => {
      const response = await get(`/api/AuthorityRvdm/WorkItem/${keys[0]!.workItemId}`);
      assert.equal(response.statusCode, 200);
      const item = response.json();
      assert.deepEqual(Object.keys(item).sort(), [
        "attempts", "authority", "completedAt", "createdAt", "customerReference", "deadlineAt", "documentReference", "error", "kind", "originalWorkItemId", "request", "result", "revision", "status", "updatedAt", "webhookUrl", "workBatchId", "workItemId", "workType",
      ]);
      assert.deepEqual(item.authority, { applicationNumber: null, registrationNumber: null, submittedAt: null, decidedAt: null });
      assert.match(item.deadlineAt, /^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
      assert.equal(item.workType, "AuthorityRvdm");
      assert.equal(item.status, "New");
      assert.match(item.createdAt, /Z$/);
    });

    test("WorkBatch/{id} returns the batch with counts", async () => {
      const response = await get(`/api/AuthorityRvdm/WorkBatch/${keys[0]!.workBatchId}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json().counts, { new: 5, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 0, withdrawn: 0 });
      assert.equal(response.json().status, "Open");
    });

    test("WorkItems pages newest first with a keyset cursor and filters", async () => {
      const first = await get("/api/AuthorityRvdm/WorkItems?limit=2");
      assert.equal(first.statusCode, 200);
      const page1 = first.json<{ items: Array<{ workItemId: number }>; nextCursor: string | null }>();
      assert.deepEqual(page1.items.map((i) => i.workItemId), [keys[4]!.workItemId, keys[3]!.workItemId]);
      assert.ok(page1.nextCursor);
      const seen = [...page1.items];
      let cursor: string | null = page1.nextCursor;
      while (cursor) {
        const page: { items: Array<{ workItemId: number }>; nextCursor: string | null } = (await get(`/api/AuthorityRvdm/WorkItems?limit=2&cursor=${cursor}`)).json<{ items: Array<{ workItemId: number }>; nextCursor: string | null }>();
        seen.push(...page.items);
        cursor = page.nextCursor;
      }
      assert.deepEqual(seen.map((i) => i.workItemId), keys.map((k) => k.workItemId).reverse());
      const even = (await get("/api/AuthorityRvdm/WorkItems?customerReference=even&STATUS=New")).json<{ items: unknown[] }>();
      assert.equal(even.items.length, 3);
      const byBatch = (await get(`/api/AuthorityRvdm/WorkItems?workBatchId=${keys[0]!.workBatchId}`)).json<{ items: unknown[] }>();
      assert.equal(byBatch.items.length, 5);
      const none = (await get("/api/AuthorityRvdm/WorkItems", other.token)).json<{ items: unknown[]; nextCursor: null }>();
      assert.deepEqual(none, { items: [], nextCursor: null });
    });

    test("deadlineAt follows the rule (2 working days before transport, 12:00 Amsterdam), and WorkItems?deadlineBefore filters by it", async () => {
      const deadlines = await t.tenant(303); // a company of its own, so the other tests' pages stay as they are
      const add = async (exportDate: string) => {
        const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(deadlines.token), payload: validWorkItem({ exportDate }) });
        assert.equal(response.statusCode, 200, response.body);
        const { workItemId } = response.json<{ workItemId: number }>();
        return (await get(`/api/AuthorityRvdm/WorkItem/${workItemId}`, deadlines.token)).json<{ workItemId: number; deadlineAt: string }>();
      };
      {
        const christmas = await add("2026-12-28T09:00:00+01:00");
        assert.equal(christmas.deadlineAt, "2026-12-23T11:00:00.000Z", "Monday 28 December 2026: Friday 25 is Christmas");
        const summer = await add("2027-07-06T06:00:00Z");
        assert.equal(summer.deadlineAt, "2027-07-02T10:00:00.000Z", "Tuesday → the Friday before, 12:00 summer time");
        const ids = async (query: string) => {
          const response = await get(`/api/AuthorityRvdm/WorkItems?${query}`, deadlines.token);
          assert.equal(response.statusCode, 200, response.body);
          return response.json<{ items: Array<{ workItemId: number }> }>().items.map((i) => i.workItemId);
        };
        assert.deepEqual(await ids("deadlineBefore=2026-12-23T11:00:00.001Z"), [christmas.workItemId]);
        assert.deepEqual(await ids("deadlineBefore=2026-12-23T12:00:00%2B01:00"), [], "the bound is exclusive, and offsets are honoured");
        assert.deepEqual(await ids("deadlineBefore=2028-01-01T00:00:00Z"), [summer.workItemId, christmas.workItemId]);
        assert.deepEqual(await ids("deadlineBefore=2028-01-01T00:00:00Z&status=New&limit=1"), [summer.workItemId]);
        for (const bad of ["yesterday", "2026-12-23", "2026-13-01T00:00:00Z"]) {
          const response = await get(`/api/AuthorityRvdm/WorkItems?deadlineBefore=${bad}`, deadlines.token);
          assert.equal(response.statusCode, 400, bad);
          assert.ok(problem(response).errors?.deadlineBefore, bad);
        }
      }
    });

    test("WorkItems refuses bad query values with 400", async () => {
      for (const query of ["limit=0", "limit=201", "limit=abc", "status=Done", "cursor=%21%21", "workBatchId=-1", "deadlineBefore=soon"]) {
        const response = await get(`/api/AuthorityRvdm/WorkItems?${query}`);
        assert.equal(response.statusCode, 400, query);
        assert.ok(problem(response).errors, query);
      }
    });

    test("ids that are not positive integers are 400; unknown ids are 404", async () => {
      assert.equal((await get("/api/AuthorityRvdm/WorkItem/abc")).statusCode, 400);
      assert.equal((await get("/api/AuthorityRvdm/WorkItem/0")).statusCode, 400);
      assert.equal((await get("/api/AuthorityRvdm/WorkItem/99999999999999999999")).statusCode, 400);
      assert.equal((await get("/api/AuthorityRvdm/WorkItem/987654")).statusCode, 404);
    });

    test("another company's ids are 404, exactly like missing ids", async () => {
      await assertForeignIdIsNotFound(t, other, { method: "GET", url: `/api/AuthorityRvdm/WorkItem/${keys[0]!.workItemId}` }, "/api/AuthorityRvdm/WorkItem/987654");
      await assertForeignIdIsNotFound(t, other, { method: "GET", url: `/api/AuthorityRvdm/WorkBatch/${keys[0]!.workBatchId}` }, "/api/AuthorityRvdm/WorkBatch/987654");
    });

    test("every read route is guarded", async () => {
      await assertRouteIsGuarded(t, owner, { method: "GET", url: `/api/AuthorityRvdm/WorkItem/${keys[0]!.workItemId}` });
      await assertRouteIsGuarded(t, owner, { method: "GET", url: `/api/AuthorityRvdm/WorkBatch/${keys[0]!.workBatchId}` });
      await assertRouteIsGuarded(t, owner, { method: "GET", url: "/api/AuthorityRvdm/WorkItems" });
    });
  });
}
