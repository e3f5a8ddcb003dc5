/**
 * Who may call the operator API (SPEC §12.1), on every route it publishes: no token is a 401
 * with the Bearer challenge, an unknown or disabled operator's token a 401, an integrator's token
 * a 403; a viewer reads and gets a 403 on every state-changing route; an operator token gets a
 * 403 on every integrator route; a disabled operator's token stops working within 5 seconds.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { disableOperatorAccount } from "../../../src/operators/accounts.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { apiOperations, describeOperation, exampleBody, fillPath, type ApiOperation } from "../../helpers/openapi-routes.ts";
import { createTestOperator, type TestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";
import { waitUntil } from "../../helpers/waiting.ts";

const isStateChanging = (operation: ApiOperation) => operation.method !== "GET";
/** A company's export and erase (SPEC §22) are an admin's alone. */
const ADMIN_ONLY = new Set(["GET /api/Operator/Companies/{companyId}/Export", "POST /api/Operator/Companies/{companyId}/Erase"]);
const isAdminOnly = (operation: ApiOperation) => ADMIN_ONLY.has(describeOperation(operation));

function assertProblem(response: LightMyRequestResponse, status: number, where: string): void {
  assert.equal(response.statusCode, status, `${where}: ${response.statusCode} ${response.body}`);
  assert.match(String(response.headers["content-type"]), /^application\/problem\+json; charset=utf-8$/, where);
  assert.equal(problem(response).status, status, where);
}

for (const backend of await availableBackends()) {
  describe(`operator API access [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let viewer: TestOperator;
    let operator: TestOperator;
    let operatorRoutes: ApiOperation[];
    let integratorRoutes: ApiOperation[];
    const ids: Record<string, number> = {};

    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(2101);
      const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });
      ids.workItemId = added.json<{ workItemId: number }>().workItemId;
      ids.workBatchId = added.json<{ workBatchId: number }>().workBatchId;
      ids.deliveryId = 424242;
      // No such company: a call that passes the guard finds nothing to erase.
      ids.companyId = 424243;
      viewer = await createTestOperator(t.store, "viewer");
      operator = await createTestOperator(t.store, "operator");
      const operations = await apiOperations(t.app);
      operatorRoutes = operations.filter((operation) => operation.operator);
      integratorRoutes = operations.filter((operation) => operation.protected);
    });
    after(() => t.close());

    const call = (operation: ApiOperation, headers: Record<string, string>) =>
      t.app.inject({
        method: operation.method,
        url: fillPath(operation, ids),
        headers: { "content-type": "application/json", ...headers },
        ...(operation.jsonBody ? { payload: JSON.stringify(exampleBody(operation)) } : {}),
      });

    test("the published operator routes are the ten of SPEC §12.2, Stop of §16, and the export, erase and erasures of §22, none behind the integrator guard", () => {
      assert.equal(operatorRoutes.length, 14, operatorRoutes.map(describeOperation).join(", "));
      assert.ok([...ADMIN_ONLY].every((route) => operatorRoutes.some((operation) => describeOperation(operation) === route)), "the admin's routes are published");
      assert.ok(operatorRoutes.every((operation) => operation.path.startsWith("/api/Operator/") && !operation.protected));
    });

    test("no token is a 401 with the Bearer challenge; a bad or unknown token a 401 with invalid_token", async () => {
      for (const operation of operatorRoutes) {
        const where = describeOperation(operation);
        const missing = await call(operation, {});
        assertProblem(missing, 401, `${where} without a token`);
        assert.equal(missing.headers["www-authenticate"], 'Bearer realm="work-item-api"', where);
        for (const authorization of ["Basic abc", `Bearer wio_${"A".repeat(43)}`, "Bearer not-a-token", `Bearer ${tenant.token}x`]) {
          const refused = await call(operation, { authorization });
          assertProblem(refused, 401, `${where} with ${authorization.slice(0, 20)}`);
          assert.match(String(refused.headers["www-authenticate"]), /^Bearer realm="work-item-api", error="invalid_token", error_description="[^"]+"$/, where);
        }
      }
    });

    test("every operator route answers Cache-Control: no-store, to an operator and to a refused caller alike", async () => {
      // A viewer: the reads answer 200, the state-changing routes 403, and nothing changes for the tests after this one.
      for (const operation of operatorRoutes) {
        for (const [who, headers] of [["viewer", bearer(viewer.token)], ["integrator", bearer(tenant.token)], ["nobody", {}]] as const) {
          const response = await call(operation, headers);
          assert.equal(response.headers["cache-control"], "no-store", `${describeOperation(operation)} as ${who}: ${response.statusCode}`);
        }
      }
    });

    test("an integrator's token is a 403 on every operator route, and asks for no other token", async () => {
      for (const operation of operatorRoutes) {
        const response = await call(operation, bearer(tenant.token));
        assertProblem(response, 403, describeOperation(operation));
        assert.equal(response.headers["www-authenticate"], undefined);
        assert.match(problem(response).detail, /operator token/);
      }
    });

    test("an operator token is a 403 on every integrator route", async () => {
      assert.ok(integratorRoutes.length >= 5);
      for (const operation of integratorRoutes) {
        const response = await call(operation, bearer(operator.token));
        assertProblem(response, 403, describeOperation(operation));
        assert.equal(response.headers["www-authenticate"], undefined);
      }
    });

    test("a viewer reads everything and gets a 403 on every state-changing route, which changes nothing", async () => {
      const rows = await t.countRows();
      for (const operation of operatorRoutes) {
        const response = await call(operation, bearer(viewer.token));
        if (isAdminOnly(operation)) {
          assertProblem(response, 403, `${describeOperation(operation)} as viewer`);
          assert.match(problem(response).detail, /need role admin/);
        } else if (isStateChanging(operation)) {
          assertProblem(response, 403, `${describeOperation(operation)} as viewer`);
          assert.match(problem(response).detail, /viewer may only read/);
        } else {
          assert.equal(response.statusCode, 200, `${describeOperation(operation)} as viewer: ${response.body}`);
        }
      }
      assert.deepEqual(await t.countRows(), rows);
      const audit = await t.app.inject({ url: "/api/Operator/Audit", headers: bearer(viewer.token) });
      assert.deepEqual(audit.json<{ entries: unknown[] }>().entries, [], "no action was recorded");
    });

    test("the role operator passes the role check on every state-changing route but an admin's", async () => {
      for (const operation of operatorRoutes.filter(isStateChanging)) {
        const response = await call(operation, bearer(operator.token));
        if (isAdminOnly(operation)) assertProblem(response, 403, `${describeOperation(operation)} needs an admin`);
        else assert.ok(response.statusCode !== 403 && response.statusCode < 500, `${describeOperation(operation)}: ${response.statusCode} ${response.body}`);
      }
    });

    test("bad input on every operator route is a 4xx problem, never a 5xx", async () => {
      const admin = await createTestOperator(t.store, "admin");
      const badIds = ["0", "-1", "1e400", "Infinity", "99999999999999999999", "abc", "%ZZ"];
      const badBodies = ["[]", "null", '"x"', "{", '{"reason":null}', '{"reason":{}}', `{"reason":"${"x".repeat(70_000)}"}`, '{"__proto__":{"a":1},"reason":"x"}', '{"reason":"x","status":"Failed","companyId":1e400}'];
      const badQueries = ["limit=abc", "limit=1e400", "cursor=%ZZ", "cursor=", "companyId=-1", "status=", "deadlineBefore=2026-13-45T99:99:99Z", "limit=1&limit=2"];
      let checked = 0;
      const check = async (method: ApiOperation["method"], url: string, payload?: string) => {
        const response = await t.app.inject({ method, url, headers: { ...bearer(admin.token), "content-type": "application/json" }, ...(payload === undefined ? {} : { payload }) });
        const where = `${method} ${url.slice(0, 80)} ${payload?.slice(0, 40) ?? ""}`;
        assert.ok(response.statusCode < 500, `${where}: ${response.statusCode} ${response.body.slice(0, 200)}`);
        if (response.statusCode >= 400) assertProblem(response, response.statusCode, where);
        checked++;
      };
      for (const operation of operatorRoutes) {
        const body = operation.jsonBody ? JSON.stringify(exampleBody(operation)) : undefined;
        for (const id of operation.pathParams.length > 0 ? badIds : []) {
          await check(operation.method, operation.path.replace(/\{[^}]+\}/g, id), body);
        }
        const url = fillPath(operation, ids);
        for (const payload of operation.jsonBody ? badBodies : []) await check(operation.method, url, payload);
        for (const query of operation.method === "GET" ? badQueries : []) await check(operation.method, `${url}?${query}`);
      }
      assert.ok(checked > 80, `checked ${checked}`);
    });

    test("a disabled operator's token stops working within 5 seconds", async () => {
      const leaving = await createTestOperator(t.store, "admin");
      const overview = () => t.app.inject({ url: "/api/Operator/Overview", headers: bearer(leaving.token) });
      assert.equal((await overview()).statusCode, 200, "the token works (and is now cached)");
      const disabledAt = Date.now();
      await disableOperatorAccount(t.store, leaving.email);
      await waitUntil("the token is refused", async () => (await overview()).statusCode === 401, 5_000, 100);
      assert.ok(Date.now() - disabledAt < 5_000);
      assertProblem(await overview(), 401, "after disabling");
    });
  });
}
