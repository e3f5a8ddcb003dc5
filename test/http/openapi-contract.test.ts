/**
 * The OpenAPI document as a contract (SPEC §11.4): operationIds named after the .NET actions,
 * named components used by $ref, security on every operation, servers, every status each route
 * can answer with the headers it sets, optional query parameters, and the webhooks section.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { createTestApp, type TestApp } from "../helpers/test-app.ts";

interface Response {
  description: string;
  headers?: Record<string, { schema: Record<string, unknown> }>;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}
interface Operation {
  operationId?: string;
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, Response>;
}
interface Document {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const OPERATION_IDS: Record<string, string> = {
  "POST /api/Login/Authenticate": "Authenticate",
  "GET /api/AuthorityRvdm/Ping": "AuthorityRvdmPing",
  "GET /api/VlmMad/Ping": "VlmMadPing",
  "POST /api/AuthorityRvdm/AddWorkItemCreate": "AddWorkItemCreate",
  "POST /api/AuthorityRvdm/AddWorkItemCreateBulk": "AddWorkItemCreateBulk",
  "POST /api/AuthorityRvdm/AddWorkItemChange": "AddWorkItemChange",
  "POST /api/AuthorityRvdm/AddWorkItemWithdraw": "AddWorkItemWithdraw",
  "GET /api/AuthorityRvdm/WorkItem/{workItemId}": "GetWorkItem",
  "DELETE /api/AuthorityRvdm/WorkItem/{workItemId}": "CancelWorkItem",
  "GET /api/AuthorityRvdm/WorkBatch/{workBatchId}": "GetWorkBatch",
  "GET /api/AuthorityRvdm/WorkItems": "ListWorkItems",
  "GET /api/Events": "ListEvents",
  "GET /api/Webhooks/Deliveries": "ListWebhookDeliveries",
  "POST /api/Webhooks/Deliveries/{deliveryId}/Redeliver": "RedeliverWebhook",
  "GET /api/Operator/Overview": "OperatorOverview",
  "GET /api/Operator/WorkItems": "OperatorListWorkItems",
  "GET /api/Operator/WorkItems/{workItemId}": "OperatorGetWorkItem",
  "POST /api/Operator/WorkItems/{workItemId}/Retry": "OperatorRetryWorkItem",
  "POST /api/Operator/WorkItems/Retry": "OperatorRetryWorkItems",
  "POST /api/Operator/WorkItems/{workItemId}/Cancel": "OperatorCancelWorkItem",
  "POST /api/Operator/Bot/Pause": "OperatorPauseBot",
  "POST /api/Operator/Bot/Resume": "OperatorResumeBot",
  "POST /api/Operator/Webhooks/Deliveries/{deliveryId}/Redeliver": "OperatorRedeliverWebhook",
  "POST /api/Operator/Webhooks/Deliveries/{deliveryId}/Stop": "OperatorStopWebhookDelivery",
  "GET /api/Operator/Audit": "OperatorListAudit",
};
const isOperatorRoute = (name: string) => name.includes(" /api/Operator/");
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

for (const backend of await availableBackends()) {
  describe(`OpenAPI contract [${backend.name}]`, () => {
    let t: TestApp;
    let doc: Document;
    let operations: Array<[string, Operation]>;
    before(async () => {
      t = await createTestApp(backend);
      doc = (await t.app.inject({ url: "/openapi.json" })).json<Document>();
      operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));
    });
    after(() => t.close());

    test("every operation has a unique operationId, named after the .NET action", () => {
      const ids = operations.map(([, op]) => op.operationId);
      assert.ok(ids.every((id) => typeof id === "string" && /^[A-Z][A-Za-z]+$/.test(id)), `${ids.join(", ")}`);
      assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
      for (const [name, id] of Object.entries(OPERATION_IDS)) {
        assert.equal(operations.find(([n]) => n === name)?.[1].operationId, id, name);
      }
    });

    test("shared shapes are named components, and routes refer to them by $ref", () => {
      for (const name of ["AuthorityRvdmWorkItemCreate", "TranslationObject", "WorkItemBatchKey", "WorkItemView", "WorkBatchView", "ProblemDetails", "ValidationProblemDetails", "WebhookEvent"]) {
        assert.ok(doc.components.schemas[name], `components.schemas.${name}`);
      }
      const op = (name: string) => operations.find(([n]) => n === name)![1];
      const add = op("POST /api/AuthorityRvdm/AddWorkItemCreate");
      assert.deepEqual(add.requestBody!.content["application/json"]!.schema, ref("AuthorityRvdmWorkItemCreate"));
      assert.deepEqual(add.responses["200"]!.content!["application/json"]!.schema, ref("WorkItemBatchKey"));
      assert.deepEqual(add.responses["400"]!.content!["application/problem+json"]!.schema, ref("ValidationProblemDetails"));
      assert.deepEqual(add.responses["409"]!.content!["application/problem+json"]!.schema, ref("ProblemDetails"));
      for (const [route, body] of [["AddWorkItemChange", "AuthorityRvdmWorkItemChange"], ["AddWorkItemWithdraw", "AuthorityRvdmWorkItemWithdraw"]] as const) {
        const followUp = op(`POST /api/AuthorityRvdm/${route}`);
        assert.deepEqual(followUp.requestBody!.content["application/json"]!.schema, ref(body), route);
        assert.deepEqual(followUp.responses["200"]!.content!["application/json"]!.schema, ref("WorkItemBatchKey"), route);
        assert.deepEqual(followUp.responses["409"]!.content!["application/problem+json"]!.schema, ref("ProblemDetails"), route);
      }
      assert.deepEqual(op("GET /api/AuthorityRvdm/WorkItem/{workItemId}").responses["200"]!.content!["application/json"]!.schema, ref("WorkItemView"));
      assert.deepEqual(op("GET /api/AuthorityRvdm/WorkBatch/{workBatchId}").responses["200"]!.content!["application/json"]!.schema, ref("WorkBatchView"));
      assert.deepEqual(op("GET /api/Events").responses["200"]!.content!["application/json"]!.schema, ref("EventPage"));
      assert.deepEqual((doc.components.schemas.EventPage!.properties as Record<string, { items?: unknown }>).events!.items, ref("FeedEvent"));
      assert.deepEqual((doc.components.schemas.FeedEvent!.properties as Record<string, unknown>).data, ref("WorkItemView"));
      const deliveries = op("GET /api/Webhooks/Deliveries");
      assert.deepEqual(deliveries.responses["200"]!.content!["application/json"]!.schema, ref("WebhookDeliveryPage"));
      assert.deepEqual(op("POST /api/Webhooks/Deliveries/{deliveryId}/Redeliver").responses["202"]!.content!["application/json"]!.schema, ref("WebhookDelivery"));
      const delivery = doc.components.schemas.WebhookDelivery as { properties: Record<string, Record<string, unknown>> };
      assert.deepEqual(delivery.properties.attempts, { type: "array", items: ref("WebhookDeliveryAttempt"), description: "every attempt so far, oldest first" });
      const bulk = op("POST /api/AuthorityRvdm/AddWorkItemCreateBulk");
      assert.deepEqual(bulk.requestBody!.content["application/json"]!.schema, ref("AuthorityRvdmWorkItemCreateBulk"));
      assert.deepEqual(bulk.responses["200"]!.content!["application/json"]!.schema, ref("WorkItemBulkResults"));
      const bulkBody = doc.components.schemas.AuthorityRvdmWorkItemCreateBulk as { properties: { items: { items: unknown; minItems: number; maxItems: number } } };
      assert.deepEqual(bulkBody.properties.items.items, ref("AuthorityRvdmWorkItemCreate"), "each item is the single add's body");
      assert.deepEqual([bulkBody.properties.items.minItems, bulkBody.properties.items.maxItems], [1, 1000]);
      const results = doc.components.schemas.WorkItemBulkResults as { properties: { results: { items: { anyOf: unknown[] } } } };
      assert.deepEqual(results.properties.results.items.anyOf, [ref("WorkItemBulkAdded"), ref("WorkItemBulkRefused")]);
      const body = doc.components.schemas.AuthorityRvdmWorkItemCreate!;
      assert.deepEqual((body.properties as Record<string, unknown>).productName, ref("TranslationObject"));
      // Open to extra translation objects without an index signature every named field must fit.
      assert.deepEqual(body.unevaluatedProperties, ref("TranslationObject"));
      assert.equal(body.additionalProperties, undefined);
      assert.ok(!JSON.stringify(doc).includes('"errorMessage"'), "no validator-only keywords");
    });

    test("servers is present; public routes declare security: [], protected ones the bearer scheme", () => {
      assert.ok(doc.servers && doc.servers.length > 0);
      for (const [name, op] of operations) {
        assert.ok(Array.isArray(op.security), `${name} declares security`);
        const isProtected = name.includes(" /api/") && !name.includes("/api/Login/");
        assert.deepEqual(op.security, isOperatorRoute(name) ? [{ operatorToken: [] }] : isProtected ? [{ bearer: [] }] : [], name);
      }
    });

    test("every route documents what it can answer, with the headers each answer sets", () => {
      for (const [name, op] of operations) {
        const statuses = Object.keys(op.responses);
        assert.ok(statuses.includes("405"), `${name} documents 405`);
        assert.ok(op.responses["405"]!.headers?.Allow, `${name} 405 sets Allow`);
        if (op.security?.length) {
          // The operator API has no per-company rate limit, so no 429 (SPEC §11.4 asks it of integrator routes).
          for (const status of isOperatorRoute(name) ? ["401", "403", "503"] : ["401", "403", "429", "503"]) assert.ok(statuses.includes(status), `${name} documents ${status}`);
          assert.ok(op.responses["401"]!.headers?.["WWW-Authenticate"], `${name} 401 sets WWW-Authenticate`);
        }
        for (const status of ["429", "503"]) {
          if (op.responses[status]) assert.ok(op.responses[status].headers?.["Retry-After"], `${name} ${status} sets Retry-After`);
        }
      }
      const add = operations.find(([n]) => n === "POST /api/AuthorityRvdm/AddWorkItemCreate")![1];
      assert.ok(add.responses["200"]!.headers?.["Idempotency-Replayed"]);
      assert.ok(add.responses["409"]!.headers?.["Retry-After"]);
      for (const status of ["413", "415", "422"]) assert.ok(add.responses[status], `AddWorkItemCreate documents ${status}`);
      const bulk = operations.find(([n]) => n === "POST /api/AuthorityRvdm/AddWorkItemCreateBulk")![1];
      assert.ok(bulk.responses["200"]!.headers?.["Idempotency-Replayed"]);
      assert.ok(bulk.responses["409"]!.headers?.["Retry-After"]);
      for (const status of ["400", "413", "415", "422", "429"]) assert.ok(bulk.responses[status], `AddWorkItemCreateBulk documents ${status}`);
      const login = operations.find(([n]) => n === "POST /api/Login/Authenticate")![1];
      assert.ok(login.responses["429"]!.headers?.["Retry-After"]);
    });

    test("optional query parameters are optional (limit)", () => {
      for (const name of ["GET /api/AuthorityRvdm/WorkItems", "GET /api/Events", "GET /api/Webhooks/Deliveries", "GET /api/Operator/WorkItems", "GET /api/Operator/Audit"]) {
        const list = operations.find(([n]) => n === name)![1];
        const query = (list.parameters ?? []).filter((p) => p.in === "query");
        assert.ok(query.some((p) => p.name === "limit"), name);
        assert.deepEqual(query.filter((p) => p.required).map((p) => p.name), [], name);
      }
    });

    test("the webhooks section has every event type, its envelope and the Standard Webhooks headers", () => {
      assert.deepEqual(Object.keys(doc.webhooks).sort(), [
        "workitem.changed",
        "workitem.deadline_at_risk",
        "workitem.failed",
        "workitem.retried",
        "workitem.submitted",
        "workitem.succeeded",
        "workitem.withdrawn",
      ]);
      for (const [type, { post }] of Object.entries(doc.webhooks)) {
        assert.deepEqual(post.requestBody!.content["application/json"]!.schema, ref("WebhookEvent"), type);
        const headers = (post.parameters ?? []).filter((p) => p.in === "header" && p.required).map((p) => p.name);
        assert.deepEqual(headers, ["webhook-id", "webhook-timestamp", "webhook-signature"], type);
        assert.ok(post.operationId, type);
      }
      const event = doc.components.schemas.WebhookEvent as { required: string[]; properties: Record<string, Record<string, unknown>> };
      assert.deepEqual(event.required, ["type", "timestamp", "data"]);
      assert.deepEqual(event.properties.data, ref("WorkItemView"));
    });

    test("the documented answers are the real ones: 400 carries errors, 405 Allow, 401 WWW-Authenticate", async () => {
      const malformed = await t.app.inject({ method: "POST", url: "/api/Login/Authenticate", headers: { "content-type": "application/json" }, payload: "{" });
      assert.equal(malformed.statusCode, 400);
      assert.deepEqual(Object.keys(malformed.json<{ errors: Record<string, string[]> }>().errors), ["$"], "every 400 is a ValidationProblemDetails");
      const wrongMethod = await t.app.inject({ method: "PUT", url: "/api/AuthorityRvdm/WorkItems" });
      assert.equal(wrongMethod.statusCode, 405);
      assert.equal(wrongMethod.headers.allow, "GET, HEAD");
      const noToken = await t.app.inject({ url: "/api/VlmMad/Ping" });
      assert.equal(noToken.statusCode, 401);
      assert.ok(noToken.headers["www-authenticate"]);
    });
  });
}
