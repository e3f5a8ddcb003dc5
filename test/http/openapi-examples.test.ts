/**
 * The OpenAPI document carries a request example for every body and a response example for
 * every documented status, and every example is valid against the schema beside it, so the
 * reference page never shows a stale or impossible example.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { availableBackends } from "../helpers/backends.ts";
import { createTestApp, type TestApp } from "../helpers/test-app.ts";

interface Media {
  schema?: Record<string, unknown>;
  example?: unknown;
}
interface Operation {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}

for (const backend of await availableBackends()) {
  describe(`OpenAPI examples [${backend.name}]`, () => {
    let t: TestApp;
    let operations: Array<[string, Operation]>;
    let components: Record<string, unknown>;
    /** A schema of the document resolved to its component when it is a $ref. */
    let resolve: (schema: Record<string, unknown>) => Record<string, unknown>;
    before(async () => {
      t = await createTestApp(backend);
      const doc = (await t.app.inject({ url: "/openapi.json" })).json<{ paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> }>();
      components = doc.components;
      const schemas = components.schemas as Record<string, Record<string, unknown>>;
      resolve = (schema) => (typeof schema.$ref === "string" ? schemas[schema.$ref.replace("#/components/schemas/", "")]! : schema);
      operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));
    });
    after(() => t.close());

    test("every request body and every response has an example that its schema accepts", () => {
      // OpenAPI 3.1 schemas are JSON Schema 2020-12; `$ref`s point into the document's components.
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      // ajv-formats is CommonJS; under NodeNext its default export is the module object.
      (addFormats as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
      let checked = 0;
      for (const [name, op] of operations) {
        const media: Array<[string, Media]> = [];
        for (const [type, entry] of Object.entries(op.requestBody?.content ?? {})) media.push([`${name} request ${type}`, entry]);
        for (const [status, response] of Object.entries(op.responses)) {
          assert.notEqual(response.description, "Default Response", `${name} ${status} has a description`);
          assert.ok(response.content, `${name} ${status} documents a body`);
          for (const [type, entry] of Object.entries(response.content)) media.push([`${name} ${status} ${type}`, entry]);
        }
        for (const [label, entry] of media) {
          assert.notEqual(entry.example, undefined, `${label} has an example`);
          if (entry.schema) {
            const valid = ajv.validate({ ...entry.schema, components }, entry.example);
            assert.ok(valid, `${label}: ${ajv.errorsText()}`);
          }
          checked++;
        }
      }
      assert.ok(checked >= 40, `checked ${checked} examples`);
    });

    test("the two-stage filing shows: the Submitted state, authority progress, deadlineAt and the deadlineBefore filter", () => {
      const list = operations.find(([name]) => name === "GET /api/AuthorityRvdm/WorkItems")![1] as Operation & { parameters: Array<{ name: string; schema: { format?: string } }> };
      assert.equal(list.parameters.find((p) => p.name === "deadlineBefore")?.schema.format, "date-time");
      const item = operations.find(([name]) => name === "GET /api/AuthorityRvdm/WorkItem/{workItemId}")![1];
      const schema = resolve(item.responses["200"]!.content!["application/json"]!.schema!) as { properties: Record<string, Record<string, unknown>> };
      assert.ok(JSON.stringify(schema.properties.status).includes('"Submitted"'));
      const authority = resolve(schema.properties.authority!) as { properties: Record<string, unknown> };
      assert.deepEqual(Object.keys(authority.properties).sort(), ["applicationNumber", "decidedAt", "registrationNumber", "submittedAt"]);
      assert.ok(schema.properties.deadlineAt);
    });

    test("each problem example is the answer the API gives for that status", () => {
      for (const [name, op] of operations) {
        for (const [status, response] of Object.entries(op.responses)) {
          const problem = response.content?.["application/problem+json"]?.example as { status?: number; type?: string } | undefined;
          if (!problem) continue;
          assert.equal(problem.status, Number(status), `${name} ${status}`);
          assert.match(problem.type ?? "", /^urn:work-item-api:problem:[a-z-]+$/);
        }
      }
    });
  });
}
