/**
 * Issue 24, defect 2: U+0000 in a query string (`%00`) answered 500 on PostgreSQL, whose text
 * cannot hold it. It is a 400 naming the parameter on every route that reads a query: the
 * integrator's list, the operator API's filters and the console's work-items filter.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type Tenant, type TestApp } from "../helpers/test-app.ts";

for (const backend of await availableBackends()) {
  describe(`U+0000 in a query string [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let operatorToken: string;
    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(2401);
      operatorToken = (await createTestOperator(t.store, "admin")).token;
      const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: validWorkItem({ customerReference: "nul-neighbour" }) });
      assert.equal(added.statusCode, 200, added.body);
    });
    after(() => t.close());

    test("the integrator's and the operator API's filters answer 400 naming the parameter, never 500", async () => {
      const cases: Array<[string, string, string]> = [
        ["/api/AuthorityRvdm/WorkItems?customerReference=%00", tenant.token, "customerReference"],
        ["/api/AuthorityRvdm/WorkItems?customerReference=nul-%00-neighbour", tenant.token, "customerReference"],
        ["/api/Operator/WorkItems?customerReference=%00", operatorToken, "customerReference"],
        ["/api/Operator/WorkItems?applicationNumber=A%00", operatorToken, "applicationNumber"],
        ["/api/Operator/WorkItems?registrationNumber=%00R", operatorToken, "registrationNumber"],
        ["/api/Operator/WorkItems?customerReference=x&customerReference=%00", operatorToken, "customerReference"],
      ];
      for (const [url, token, field] of cases) {
        const response = await t.app.inject({ url, headers: bearer(token) });
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
        assert.deepEqual(problem(response).errors?.[field], ["must not contain U+0000"], url);
      }
      // The same filters without the NUL still work.
      const found = await t.app.inject({ url: "/api/AuthorityRvdm/WorkItems?customerReference=nul-neighbour", headers: bearer(tenant.token) });
      assert.equal(found.statusCode, 200, found.body);
      assert.equal(found.json<{ items: unknown[] }>().items.length, 1);
      const operatorFound = await t.app.inject({ url: "/api/Operator/WorkItems?customerReference=nul-neighbour", headers: bearer(operatorToken) });
      assert.equal(operatorFound.statusCode, 200, operatorFound.body);
    });

    test("the console's work-items filter answers a 400 page, never 500", async () => {
      const admin = await createOperatorAccount(t.store, { email: "nul-admin@example.com", role: "admin" });
      const client = await signedInClient(t.app, admin.email, admin.password);
      for (const name of ["customerReference", "applicationNumber", "registrationNumber"]) {
        const response = await client.get(`/console/work-items?${name}=%00`);
        assert.equal(response.statusCode, 400, `${name}: ${response.body.slice(0, 300)}`);
        assert.match(String(response.headers["content-type"]), /^text\/html/);
      }
      assert.equal((await client.get("/console/work-items?customerReference=nul-neighbour")).statusCode, 200);
    });
  });
}
