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
import { runOneBotPass } from "../helpers/bot-harness.ts";

/** What the owner has for each of its items: the BatchKey answer of AddWorkItemCreate, and the item's webhook delivery. */
interface OwnerKey {
  workItemId: number;
  workBatchId: number;
  deliveryId: number;
}

/** How to obtain an id of each kind. */
const ID_SOURCES: Record<string, (key: OwnerKey) => number> = {
  workItemId: (key) => key.workItemId,
  workBatchId: (key) => key.workBatchId,
  deliveryId: (key) => key.deliveryId,
};
const WEBHOOK_URL = "http://127.0.0.1:9/hooks";
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
    const ownerKeys: OwnerKey[] = [];

    before(async () => {
      t = await createTestApp(backend, { BATCH_MAX_ITEMS: "3", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      owner = await t.tenant(1501);
      intruder = await t.tenant(1502);
      const keys: Array<{ workItemId: number; workBatchId: number }> = [];
      for (let i = 0; i < 7; i++) {
        const body = validWorkItem({ customerReference: `OWNER-${i}`, webhookUrl: WEBHOOK_URL });
        keys.push((await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(owner.token), payload: body })).json());
      }
      // The intruder has items (and deliveries) of its own, so its lists are not trivially empty.
      for (let i = 0; i < 2; i++) {
        const body = validWorkItem({ customerReference: `INTRUDER-${i}`, webhookUrl: WEBHOOK_URL });
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(intruder.token), payload: body });
      }
      // One bot pass decides every item, and each decision is a webhook delivery.
      await runOneBotPass(t);
      const deliveries = await t.query<{ delivery_id: number | string; work_item_id: number | string }>(
        "SELECT delivery_id, work_item_id FROM webhook_outbox WHERE company_id = $1",
        [owner.companyId],
      );
      for (const key of keys) {
        const delivery = deliveries.find((row) => Number(row.work_item_id) === key.workItemId);
        assert.ok(delivery, `a delivery for item ${key.workItemId}`);
        ownerKeys.push({ ...key, deliveryId: Number(delivery.delivery_id) });
      }
      // Operators see every company by design; their routes refuse integrator tokens (test/surfaces/operator).
      operations = (await apiOperations(t.app)).filter((operation) => !operation.operator);
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
      const ownerDeliveries = async () => (await t.app.inject({ url: "/api/Webhooks/Deliveries?limit=200", headers: bearer(owner.token) })).json();
      const before = await ownerViews();
      const deliveriesBefore = await ownerDeliveries();
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
      assert.deepEqual(await ownerDeliveries(), deliveriesBefore, "the owner's deliveries are unchanged");
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
      const listed = (operation: ApiOperation) => ["items", "deliveries"].find((name) => operation.responseProperties.includes(name));
      const lists = operations.filter((o) => o.method === "GET" && o.protected && o.pathParams.length === 0 && listed(o));
      assert.ok(lists.length >= 2, "there are list routes");
      for (const operation of lists) {
        const property = listed(operation)!;
        const base = operation.path;
        const queries = [""];
        for (const parameter of operation.queryParams) {
          if (parameter.name in ID_SOURCES) for (const key of ownerKeys) queries.push(`${parameter.name}=${ID_SOURCES[parameter.name]!(key)}`);
          if (parameter.name === "customerReference") queries.push("customerReference=OWNER-0");
          if (parameter.name === "limit") queries.push("limit=200");
          if (parameter.name === "status") queries.push(property === "items" ? "status=New" : "status=failed");
        }
        const ownerSees = (await t.app.inject({ url: `${base}?limit=200`, headers: bearer(owner.token) })).json<Record<string, Array<{ workItemId: number }>>>();
        assert.equal(ownerSees[property]!.filter((item) => ownerIds.has(item.workItemId)).length, ownerIds.size, `the owner sees its own ${property}`);
        for (const query of queries) {
          const response = await t.app.inject({ url: `${base}${query ? `?${query}` : ""}`, headers: bearer(intruder.token) });
          assert.equal(response.statusCode, 200, `${base}?${query}`);
          const page = response.json<Record<string, Array<{ workItemId: number; customerReference?: string }>>>();
          for (const item of page[property]!) {
            assert.ok(!ownerIds.has(item.workItemId), `${base}?${query} shows the owner's item ${item.workItemId}`);
            if (property === "items") assert.match(item.customerReference!, /^INTRUDER-/);
          }
        }
      }
    });
  });
}
