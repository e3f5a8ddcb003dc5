/**
 * Issue 45, item 4 (SPEC §24): a repeated query parameter that is not a list is a 400 naming it
 * on every route, the operator API refuses parameters it does not declare, and integrator routes
 * keep ignoring them (SPEC §1). `?workBatchId=4&workBatchId=5` on the operator list answered 500.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Type } from "@sinclair/typebox";
import Fastify, { type LightMyRequestResponse } from "fastify";
import { installErrorHandling } from "../../src/errors.ts";
import { checkQueryShape, refuseUnknownQueryParameters } from "../../src/http/query-shape.ts";
import { createValidatorCompiler } from "../../src/http/validation.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signedInClient, type ConsoleClient } from "../helpers/console-session.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type Tenant, type TestApp } from "../helpers/test-app.ts";

/** A 400 problem whose errors are exactly `errors`. */
function assertRefused(response: LightMyRequestResponse, errors: Record<string, string[]>, label: string): void {
  assert.equal(response.statusCode, 400, `${label}: ${response.body}`);
  assert.match(String(response.headers["content-type"]), /^application\/problem\+json; charset=utf-8$/, label);
  assert.deepEqual(problem(response).errors, errors, label);
}

const OPERATOR_LIST_TAKES =
  "is not a known parameter; this route takes company, companyId, status, kind, due, customerReference, applicationNumber, registrationNumber, workBatchId, deadlineBefore, order, limit, cursor";

for (const backend of await availableBackends()) {
  describe(`query parameters given twice, or unknown [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let operatorToken: string;
    let workBatchId: number;
    let workItemId: number;
    let console_: ConsoleClient;

    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(4501);
      operatorToken = (await createTestOperator(t.store, "viewer")).token;
      const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });
      assert.equal(added.statusCode, 200, added.body);
      ({ workBatchId, workItemId } = added.json<{ workBatchId: number; workItemId: number }>());
      const admin = await createOperatorAccount(t.store, { email: "query-shape@example.com", role: "admin" });
      console_ = await signedInClient(t.app, admin.email, admin.password);
    });
    after(() => t.close());

    const asIntegrator = (url: string) => t.app.inject({ url, headers: bearer(tenant.token) });
    const asOperator = (url: string, method: "GET" | "POST" = "GET") =>
      t.app.inject({ method, url, headers: bearer(operatorToken), ...(method === "POST" ? { payload: { reason: "query shape" } } : {}) });

    test("the issue's request: the operator list with workBatchId twice is a 400, not a 500", async () => {
      assertRefused(await asOperator(`/api/Operator/WorkItems?workBatchId=${workBatchId}&workBatchId=${workBatchId + 1}`), { workBatchId: ["must be given once, not 2 times"] }, "workBatchId");
    });

    test("integrator routes: a declared parameter given twice is a 400 naming it, in any letter case", async () => {
      const cases: Array<[string, Record<string, string[]>]> = [
        [`/api/AuthorityRvdm/WorkItems?workBatchId=${workBatchId}&workBatchId=${workBatchId}`, { workBatchId: ["must be given once, not 2 times"] }],
        ["/api/AuthorityRvdm/WorkItems?status=New&Status=Failed&STATUS=New", { status: ["must be given once, not 3 times"] }],
        ["/api/AuthorityRvdm/WorkItems?limit=1&limit=2&cursor=a&cursor=b", { limit: ["must be given once, not 2 times"], cursor: ["must be given once, not 2 times"] }],
        ["/api/Events?type=workitem.failed&type=workitem.succeeded", { type: ["must be given once, not 2 times"] }],
        [`/api/Webhooks/Deliveries?workItemId=${workItemId}&workItemId=${workItemId}`, { workItemId: ["must be given once, not 2 times"] }],
      ];
      for (const [url, errors] of cases) assertRefused(await asIntegrator(url), errors, url);
    });

    test("integrator routes ignore unknown parameters, repeated, bracketed or on a route that takes none", async () => {
      for (const url of [
        "/api/AuthorityRvdm/WorkItems?foo=1",
        "/api/AuthorityRvdm/WorkItems?foo=1&foo=2&limit[]=5&status[0]=New",
        `/api/AuthorityRvdm/WorkItem/${workItemId}?x=1&x=2`,
        "/api/Events?unknown=",
        "/api/AuthorityRvdm/Ping?a=1&a=2",
      ]) {
        const response = await asIntegrator(url);
        assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      }
      const page = (await asIntegrator("/api/AuthorityRvdm/WorkItems?foo=1&foo=2")).json<{ items: Array<{ workItemId: number }> }>();
      assert.deepEqual(page.items.map((item) => item.workItemId), [workItemId], "the unknown names filtered nothing");
    });

    test("operator routes: an unknown parameter is a 400 naming it, every problem at once", async () => {
      assertRefused(await asOperator("/api/Operator/WorkItems?sort=deadline"), { sort: [OPERATOR_LIST_TAKES] }, "the console's name for order");
      assertRefused(await asOperator("/api/Operator/WorkItems?CompanyId=1"), { CompanyId: [OPERATOR_LIST_TAKES] }, "names are exact here");
      assertRefused(
        await asOperator("/api/Operator/WorkItems?status=New&status=Failed&limit[]=1&x="),
        { status: ["must be given once, not 2 times"], "limit[]": [OPERATOR_LIST_TAKES], x: [OPERATOR_LIST_TAKES] },
        "repeated and unknown together",
      );
      assertRefused(await asOperator("/api/Operator/Audit?limit=5&companyId=1"), { companyId: ["is not a known parameter; this route takes limit, cursor"] }, "audit");
      const none = { verbose: ["is not a known parameter; this route takes none"] };
      assertRefused(await asOperator("/api/Operator/Overview?verbose=1"), none, "overview");
      assertRefused(await asOperator(`/api/Operator/WorkItems/${workItemId}?verbose=1`), none, "one item");
      // On a state-changing route the role is checked first: a viewer learns nothing more.
      assert.equal((await asOperator(`/api/Operator/WorkItems/${workItemId}/Cancel?verbose=1`, "POST")).statusCode, 403);
    });

    test("operator routes answer as before without unknown or repeated parameters", async () => {
      const response = await asOperator(`/api/Operator/WorkItems?companyId=${tenant.companyId}&status=New&limit=10`);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json<{ items: Array<{ workItemId: number }> }>().items.map((item) => item.workItemId), [workItemId]);
      assert.equal((await asOperator("/api/Operator/Overview")).statusCode, 200);
    });

    test("a stranger is told about the token, not about parameters", async () => {
      const response = await t.app.inject({ url: "/api/Operator/WorkItems?x=1&x=2" });
      assert.equal(response.statusCode, 401);
      assert.equal((await t.app.inject({ url: "/api/AuthorityRvdm/WorkItems?limit=1&limit=2" })).statusCode, 401);
    });

    test("console pages: a parameter the page reads, given twice, is a 400 page naming it; others are ignored", async () => {
      for (const [url, name] of [
        ["/console/work-items?status=Failed&status=New", "status"],
        ["/console/work-items?companyId=1&companyId=2", "companyId"],
        ["/console/webhook-deliveries?cursor=5&cursor=6", "cursor"],
        ["/console/audit?cursor=1&cursor=2", "cursor"],
        ["/console/find?q=1&q=2", "q"],
        [`/console/work-items/${workItemId}?done=retried&done=cancelled`, "done"],
      ] as const) {
        const response = await console_.get(url);
        assert.equal(response.statusCode, 400, `${url}: ${response.body.slice(0, 300)}`);
        assert.match(String(response.headers["content-type"]), /^text\/html/, url);
        assert.match(response.body, new RegExp(`The address gives ${name} 2 times; give it once\\.`), url);
      }
      for (const url of ["/console/work-items?foo=1&foo=2&status[]=New", "/console/audit?x=1&x=2", `/console/work-items/${workItemId}?tab=1&tab=2`]) {
        assert.equal((await console_.get(url)).statusCode, 200, url);
      }
    });
  });
}

describe("a parameter the schema declares a list may be repeated", () => {
  test("only a list takes several values; a strict surface refuses the rest", async () => {
    const app = Fastify();
    app.setValidatorCompiler(createValidatorCompiler());
    installErrorHandling(app, () => []);
    checkQueryShape(app);
    const querystring = Type.Object({ tag: Type.Optional(Type.Array(Type.String())), one: Type.Optional(Type.String()) });
    app.get("/open", { schema: { querystring } }, async (request) => request.query);
    await app.register(async (strict) => {
      refuseUnknownQueryParameters(strict);
      strict.get("/strict", { schema: { querystring } }, async (request) => request.query);
    });
    try {
      const listed = await app.inject({ url: "/open?tag=a&tag=b&one=c" });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.deepEqual(listed.json(), { tag: ["a", "b"], one: "c" });
      assertRefused(await app.inject({ url: "/open?tag=a&one=b&one=c" }), { one: ["must be given once, not 2 times"] }, "open");
      assert.equal((await app.inject({ url: "/strict?tag=a&tag=b" })).statusCode, 200);
      assertRefused(await app.inject({ url: "/strict?tag=a&two=b" }), { two: ["is not a known parameter; this route takes tag, one"] }, "strict");
    } finally {
      await app.close();
    }
  });
});
