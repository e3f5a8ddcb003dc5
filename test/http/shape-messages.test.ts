/**
 * Issue 45, item 5 (SPEC §24, §7): a body part of the wrong shape gets a message that names the
 * expected shape and the one that came. `changes` sent as an array on AddWorkItemChange answered
 * `"changes": ["[object Object]"]`. Query values are text, so there the expected shape alone.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type Tenant, type TestApp } from "../helpers/test-app.ts";

for (const backend of await availableBackends()) {
  describe(`messages of a body part of the wrong shape [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let operatorToken: string;
    let original: number;

    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(4502);
      operatorToken = (await createTestOperator(t.store, "operator")).token;
      const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });
      assert.equal(added.statusCode, 200, added.body);
      original = added.json<{ workItemId: number }>().workItemId;
    });
    after(() => t.close());

    const errorsOf = async (url: string, payload: unknown, token = tenant.token) => {
      const response = await t.app.inject({ method: "POST", url, headers: { ...bearer(token), "content-type": "application/json" }, payload: JSON.stringify(payload) });
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      return problem(response).errors;
    };
    const change = (changes: unknown, extra: Record<string, unknown> = {}) =>
      errorsOf("/api/AuthorityRvdm/AddWorkItemChange", { originalWorkItemId: original, customerReference: "C-1", changes, ...extra });

    test("AddWorkItemChange: `changes` of the wrong shape says it must be an object", async () => {
      assert.deepEqual(await change([{ plannedLoad: 1 }]), { changes: ["must be an object, not an array"] });
      assert.deepEqual(await change("plannedLoad=1"), { changes: ["must be an object, not a string"] });
      assert.deepEqual(await change(null), { changes: ["must be an object, not null"] });
      // The schema's own message for its other keyword still stands.
      assert.deepEqual(await change({}), { changes: ["must change at least one field"] });
      assert.deepEqual(await change({ plannedLoad: 1 }, { originalWorkItemId: 1.5 }), { originalWorkItemId: ["must be an integer, not 1.5"] });
    });

    test("AddWorkItemCreate: each field names its shape, nested ones and the body as a whole too", async () => {
      const add = (body: unknown) => errorsOf("/api/AuthorityRvdm/AddWorkItemCreate", body);
      assert.deepEqual(
        await add(validWorkItem({ productName: [{ sendValue: "X" }], customerReference: { value: "A" }, documentReference: 5, plannedLoad: [31.5], destinationCountry: { sendValue: true } })),
        {
          productName: ["must be an object, not an array"],
          customerReference: ["must be a string, not an object"],
          documentReference: ["must be a string, not a number"],
          plannedLoad: ["must be a number, not an array"],
          "destinationCountry.sendValue": ["must be a string, not a boolean"],
        },
      );
      assert.deepEqual(await add([validWorkItem()]), { $: ["must be an object, not an array"] });
    });

    test("a bulk add's list and its items, and an operator's reason", async () => {
      assert.deepEqual(await errorsOf("/api/AuthorityRvdm/AddWorkItemCreateBulk", { items: validWorkItem() }), { items: ["must be an array, not an object"] });
      const response = await t.app.inject({
        method: "POST",
        url: "/api/AuthorityRvdm/AddWorkItemCreateBulk",
        headers: bearer(tenant.token),
        payload: { items: [validWorkItem({ productName: "RUNDVEEMEST" })] },
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json<{ results: Array<{ errors?: unknown }> }>().results[0]!.errors, { productName: ["must be an object, not a string"] });
      assert.deepEqual(await errorsOf(`/api/Operator/WorkItems/${original}/Cancel`, { reason: ["why"] }, operatorToken), { reason: ["must be a string, not an array"] });
    });

    test("a query value is text: its message names the expected shape alone", async () => {
      const response = await t.app.inject({ url: "/api/AuthorityRvdm/WorkItems?limit=ten", headers: bearer(tenant.token) });
      assert.equal(response.statusCode, 400, response.body);
      assert.deepEqual(problem(response).errors, { limit: ["must be an integer"] });
    });
  });
}
