/**
 * Tenant isolation matrix, generated from /openapi.json: every route with an id in its path,
 * called with another company's ids, answers exactly like a missing id (404, same body minus
 * traceId/instance and the echoed id), and changes nothing; list routes never show another
 * company's items, whatever their filters. A route added later is covered without editing this
 * test, as long as its id parameters are ones ID_SOURCES knows how to obtain; a new kind of id
 * fails the test until a source is added.
 */
import assert from "node:assert/strict";
import type { LightMyRequestResponse } from "fastify";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { apiOperations, describeOperation, exampleBody, fillPath, type ApiOperation } from "../helpers/openapi-routes.ts";
import { bearer, createTestApp, validWorkItem, type TestApp, type Tenant } from "../helpers/test-app.ts";

/** How to obtain an id of each kind: from the BatchKey answer of AddWorkItemCreate. */
const ID_SOURCES: Record<string, (key: { workItemId: number; workBatchId: number }) => number> = {
  workItemId: (key) => key.workItemId,
  workBatchId: (key) => key.workBatchId,
};
const MISSING_ID = 987_654_321;

function comparable(response: LightMyRequestResponse, id: number): unknown {
  const body = response.json<Record<string, unknown>>();
  const { traceId: _traceId, instance: _instance, ...rest } = body;
  const headers = Object.keys(response.headers).filter((name) => !["date", "content-length"].includes(name)).sort();
  // The detail may echo the id the caller sent; that tells the caller nothing new.
  if (typeof rest.detail === "string") rest.detail = rest.detail.replace(new RegExp(`\\b${id}\\b`, "g"), "{id}");
  return { status: response.statusCode, headers, contentType: response.headers["content-type"], body: rest };
}

for (const backend of await availableBackends()) {
  describe(`tenant isolation matrix [${backend.name}]`, () => {
    let t: TestApp;
    let owner: Tenant;
    let intruder: Tenant;
    let operations: ApiOperation[];
    const ownerKeys: Array<{ workItemId: number; workBatchId: number }> = [];

    before(async () => {
      t = await createTestApp(backend, { BATCH_MAX_ITEMS: "3" });
      owner = await t.tenant(1501);
      intruder = await t.tenant(1502);
      for (let i = 0; i < 7; i++) {
        const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(owner.token), payload: validWorkItem({ customerReference: `OWNER-${i}` }) });
        ownerKeys.push(response.json());
      }
      // The intruder has items of its own, so its lists are not trivially empty.
      for (let i = 0; i < 2; i++) {
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(intruder.token), payload: validWorkItem({ customerReference: `INTRUDER-${i}` }) });
      }
      operations = await apiOperations(t.app);
    });
    after(() => t.close());

    const call = (operation: ApiOperation, url: string, tenant: Tenant) =>
      t.app.inject({
        method: operation.method,
        url,
        headers: { ...bearer(tenant.token), "content-type": "application/json" },
        ...(operation.jsonBody ? { payload: JSON.stringify(exampleBody(operation)) } : {}),
      });

    test("every route with an id parameter has a known source of ids and sits behind the guard", () => {
      const withIds = operations.filter((operation) => operation.pathParams.length > 0);
      assert.ok(withIds.length >= 2, "the matrix is not empty");
      for (const operation of withIds) {
        assert.ok(operation.protected, `${describeOperation(operation)} takes an id but is not behind the bearer guard`);
        for (const name of operation.pathParams) {
          assert.ok(name in ID_SOURCES, `no known way to obtain a {${name}} for ${describeOperation(operation)}: add it to ID_SOURCES`);
        }
      }
    });

    test("another company's ids answer exactly like missing ids, and change nothing", async () => {
      const ownerViews = async () => Promise.all(ownerKeys.map(async (key) => (await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${key.workItemId}`, headers: bearer(owner.token) })).json()));
      const before = await ownerViews();
      const rowsBefore = await t.countRows();
      let compared = 0;
      for (const operation of operations.filter((o) => o.pathParams.length > 0)) {
        for (const key of ownerKeys) {
          const foreignIds = Object.fromEntries(operation.pathParams.map((name) => [name, ID_SOURCES[name]!(key)]));
          const missingIds = Object.fromEntries(operation.pathParams.map((name) => [name, MISSING_ID]));
          const foreign = await call(operation, fillPath(operation, foreignIds), intruder);
          const missing = await call(operation, fillPath(operation, missingIds), intruder);
          const where = `${describeOperation(operation)} with ${JSON.stringify(foreignIds)}`;
          assert.equal(foreign.statusCode, 404, `${where}: ${foreign.statusCode} ${foreign.body}`);
          const foreignId = Number(Object.values(foreignIds)[0]);
          assert.deepEqual(comparable(foreign, foreignId), comparable(missing, MISSING_ID), `${where} looks different from a missing id`);
          compared++;
        }
      }
      assert.ok(compared > 0);
      assert.deepEqual(await ownerViews(), before, "the owner's items are unchanged");
      assert.deepEqual(await t.countRows(), rowsBefore);
    });

    test("the owner itself reaches those ids (the 404s above are not for every caller)", async () => {
      for (const operation of operations.filter((o) => o.pathParams.length > 0 && o.method === "GET")) {
        const ids = Object.fromEntries(operation.pathParams.map((name) => [name, ID_SOURCES[name]!(ownerKeys[0]!)]));
        assert.equal((await call(operation, fillPath(operation, ids), owner)).statusCode, 200, describeOperation(operation));
      }
    });

    test("list routes never show another company's items, whatever the filters", async () => {
      const ownerIds = new Set(ownerKeys.map((key) => key.workItemId));
      const lists = operations.filter((o) => o.method === "GET" && o.protected && o.pathParams.length === 0 && o.responseProperties.includes("items"));
      assert.ok(lists.length >= 1, "there is at least one list route");
      for (const operation of lists) {
        const base = operation.path;
        const queries = [""];
        for (const parameter of operation.queryParams) {
          if (parameter.name in ID_SOURCES) for (const key of ownerKeys) queries.push(`${parameter.name}=${ID_SOURCES[parameter.name]!(key)}`);
          if (parameter.name === "customerReference") queries.push("customerReference=OWNER-0");
          if (parameter.name === "limit") queries.push("limit=200");
          if (parameter.name === "status") queries.push("status=New");
        }
        const ownerSees = (await t.app.inject({ url: `${base}?limit=200`, headers: bearer(owner.token) })).json<{ items: Array<{ workItemId: number }> }>();
        assert.equal(ownerSees.items.filter((item) => ownerIds.has(item.workItemId)).length, ownerIds.size, "the owner sees its own items");
        for (const query of queries) {
          const response = await t.app.inject({ url: `${base}${query ? `?${query}` : ""}`, headers: bearer(intruder.token) });
          assert.equal(response.statusCode, 200, `${base}?${query}`);
          const page = response.json<{ items: Array<{ workItemId: number; customerReference: string }> }>();
          for (const item of page.items) {
            assert.ok(!ownerIds.has(item.workItemId), `${base}?${query} shows the owner's item ${item.workItemId}`);
            assert.match(item.customerReference, /^INTRUDER-/);
          }
        }
      }
    });
  });
}
