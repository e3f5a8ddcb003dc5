/**
 * Fuzzing with fast-check of every route in /openapi.json and of the headers: JSON bodies
 * (duplicate and prototype keys, numbers out of range, deep nesting, invalid UTF-8, garbled
 * text), content types, charsets and encodings, Authorization and Idempotency-Key values, path
 * ids and query strings; every query parameter of every route and console page repeated,
 * bracketed (`a[]`, `a[0]`), very long and empty (SPEC §24); then a slice of byte-level
 * requests over a real socket.
 *
 * After every request: no 5xx; every error is problem+json with a matching status (a console
 * page's, an HTML page); a rejected request stored nothing (row counts unchanged) and a 200 add
 * stored exactly one item (none when replayed); the server keeps answering /healthz. A 4xx to a
 * parameter in the wrong shape names it; an operator route refuses a parameter it does not
 * declare, and other routes answer as if it were not there. At least 10,000 requests per run.
 * FUZZ_SEED=<n> replays a run; FUZZ_SCALE=<x> multiplies the number of runs.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import type { RowCounts } from "../helpers/backends.ts";
import { availableBackends } from "../helpers/backends.ts";
import { AUDIT_QUERY } from "../../src/console/audit-page.ts";
import { DELIVERIES_QUERY } from "../../src/console/deliveries-page.ts";
import { FIND_QUERY } from "../../src/console/find-page.ts";
import { WORK_ITEM_QUERY } from "../../src/console/work-item-page.ts";
import { WORK_ITEMS_QUERY } from "../../src/console/work-items-page.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { signedInClient, type ConsoleClient } from "../helpers/console-session.ts";
import {
  authorizations, contentEncodings, contentTypes, deepNesting, garbled, headerValue, idempotencyKeys, invalidUtf8, mutatedBody, parameterShapes, parameterValue, pathIds, queryStrings,
  rawTree, serialize,
} from "../helpers/fuzz-arbitraries.ts";
import { apiOperations, describeOperation, exampleBody, fillPath, type ApiOperation, type OpenApiParameter } from "../helpers/openapi-routes.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { rawRequest, type RawResponse } from "../helpers/raw-http.ts";
import { bearer, createTestApp, validWorkItem, type TestApp, type Tenant } from "../helpers/test-app.ts";

/** The company the operator routes about one are sent for: none, so a fuzzed body that passes never erases the tenant. */
const NO_SUCH_COMPANY = 424242;
const MIN_REQUESTS = 10_000;
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Runs per part on the first backend; other backends get a fifth (the HTTP layer is shared). */
const RUNS = { bodies: 5000, paths: 2000, queries: 1500, parameterShapes: 400, consolePages: 200, headers: 1500, socket: 600 };

const ADD = "/api/AuthorityRvdm/AddWorkItemCreate";
const BULK = "/api/AuthorityRvdm/AddWorkItemCreateBulk";
/** A change or withdrawal that names an existing original stores one item of its own, as an add does. */
const FOLLOW_UPS = ["/api/AuthorityRvdm/AddWorkItemChange", "/api/AuthorityRvdm/AddWorkItemWithdraw"];
const LOGIN = "/api/Login/Authenticate";
/** A name no route declares. */
const UNKNOWN_PARAMETER = "extra";
/** How a console page's refusal names a parameter: by the label of its field, or by its name. */
const CONSOLE_LABELS: Record<string, string> = {
  company: "Company", companyId: "Company", workBatchId: "Batch", status: "Status", kind: "Kind", due: "Due", deadlineBefore: "Deadline before", sort: "Sort", cursor: "page link",
  customerReference: "Customer reference", applicationNumber: "Application number", registrationNumber: "Registration number", q: "Find",
};
/** A value each console parameter could take. */
const CONSOLE_VALUES: Record<string, string> = { deadlineBefore: "2026-12-01", due: "overdue", sort: "deadline", status: "New", kind: "create", company: "Company", done: "retried" };

/** A value the parameter could take, from its schema in /openapi.json. */
function plausibleValue(parameter: OpenApiParameter, id: number): string {
  const schema = (parameter.schema ?? {}) as { type?: string; format?: string; enum?: unknown[]; anyOf?: Array<{ enum?: unknown[] }> };
  const choice = schema.enum?.[0] ?? schema.anyOf?.[0]?.enum?.[0];
  if (choice !== undefined) return String(choice);
  if (schema.type === "integer") return parameter.name === "limit" ? "1" : String(id);
  return schema.format === "date-time" ? new Date().toISOString() : "x";
}

/** Whether a problem's errors name the parameter: as sent, in any letter case, bracketed or not. */
const problemNames = (body: string, name: string) =>
  Object.keys((JSON.parse(body) as { errors?: Record<string, unknown> }).errors ?? {}).some((key) => key.toLowerCase().includes(name.toLowerCase()));

type Answer = { status: number; headers: Record<string, string | string[] | number | undefined>; body: string };

const backends = await availableBackends();
for (const [index, backend] of backends.entries()) {
  const share = (n: number) => Math.max(50, Math.round(n * SCALE * (index === 0 ? 1 : 0.2)));
  const fcOptions = (numRuns: number) => ({ numRuns: share(numRuns), endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) });

  describe(`fuzz [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let operatorToken: string;
    let consolePages: ConsoleClient;
    let operations: ApiOperation[];
    let rows: RowCounts;
    let sent = 0;
    const statuses = new Map<number, number>();
    const validIds: number[] = [];

    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(1601);
      for (let i = 0; i < 3; i++) {
        const response = await t.app.inject({ method: "POST", url: ADD, headers: bearer(tenant.token), payload: validWorkItem() });
        const key = response.json<{ workItemId: number; workBatchId: number }>();
        validIds.push(key.workItemId, key.workBatchId);
      }
      operations = await apiOperations(t.app);
      operatorToken = (await createTestOperator(t.store, "admin")).token;
      const consoleOperator = await createOperatorAccount(t.store, { email: "fuzz@example.com", role: "admin" });
      consolePages = await signedInClient(t.app, consoleOperator.email, consoleOperator.password);
      rows = await t.countRows();
    });
    after(() => t.close());

    /** The invariants every answer must keep; `label` says what was sent. */
    async function check(answer: Answer, label: () => string, path: string): Promise<void> {
      sent++;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const where = () => `${label()}\n-> ${answer.status} ${answer.body.slice(0, 300)}`;
      assert.ok(answer.status < 500, `5xx: ${where()}`);
      const now = await t.countRows();
      if (answer.status >= 400) {
        assert.match(String(answer.headers["content-type"]), /^application\/problem\+json; charset=utf-8$/, `not problem+json: ${where()}`);
        const problem = JSON.parse(answer.body) as Record<string, unknown>;
        assert.equal(problem.status, answer.status, where());
        for (const field of ["type", "title", "detail", "instance", "traceId"]) assert.equal(typeof problem[field], "string", `${field}: ${where()}`);
        if (answer.status === 401 && !path.toLowerCase().startsWith(LOGIN.toLowerCase())) {
          assert.ok(answer.headers["www-authenticate"], `401 without WWW-Authenticate: ${where()}`);
        }
        if (answer.status === 405) assert.ok(answer.headers.allow, `405 without Allow: ${where()}`);
        if (answer.status === 429 || answer.status === 503) assert.ok(answer.headers["retry-after"], where());
        assert.deepEqual(now, rows, `a refused request stored something: ${where()}`);
      } else if (answer.status === 200 && path.toLowerCase().startsWith(BULK.toLowerCase())) {
        const { results } = JSON.parse(answer.body) as { results: Array<{ index: number; workItemId?: number; status?: number }> };
        assert.deepEqual(results.map((r) => r.index), results.map((_, i) => i), `results in request order: ${where()}`);
        const stored = results.filter((r) => r.workItemId !== undefined);
        assert.ok(stored.every((r) => Number.isSafeInteger(r.workItemId) && r.workItemId! > 0), where());
        const replayed = answer.headers["idempotency-replayed"] === "true";
        assert.equal(now.workItems, rows.workItems + (replayed ? 0 : stored.length), `a 200 bulk add stores exactly the items it names: ${where()}`);
      } else if (answer.status === 200 && [ADD, ...FOLLOW_UPS].some((add) => path.toLowerCase().startsWith(add.toLowerCase()))) {
        const key = JSON.parse(answer.body) as { workItemId: number };
        assert.ok(Number.isSafeInteger(key.workItemId) && key.workItemId > 0, where());
        const replayed = answer.headers["idempotency-replayed"] === "true";
        assert.equal(now.workItems, rows.workItems + (replayed ? 0 : 1), `a 200 add stores exactly one item: ${where()}`);
      } else {
        assert.deepEqual(now, rows, `a read changed the rows: ${where()}`);
      }
      rows = now;
      if (sent % 500 === 0) assert.equal((await t.app.inject({ url: "/healthz" })).statusCode, 200, "the server stays up");
    }

    async function inject(options: InjectOptions, label: () => string): Promise<LightMyRequestResponse> {
      const response: LightMyRequestResponse = await t.app.inject(options);
      await check({ status: response.statusCode, headers: response.headers, body: response.body }, label, String(options.url));
      return response;
    }

    /**
     * The invariants of a console page: no 5xx, a 4xx is an HTML page, a read stores nothing; with
     * `parameter`, a 4xx names it; with `expectedStatus`, the page answers that.
     */
    async function checkPage(url: string, parameter: string | undefined, expectedStatus?: number): Promise<void> {
      const answer = await consolePages.get(url);
      sent++;
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
      const where = `GET ${url.slice(0, 300)}\n-> ${answer.statusCode} ${answer.body.slice(0, 300)}`;
      assert.ok(answer.statusCode < 500, `5xx: ${where}`);
      if (expectedStatus !== undefined) assert.equal(answer.statusCode, expectedStatus, `as without the parameter: ${where}`);
      if (answer.statusCode >= 400) {
        assert.match(String(answer.headers["content-type"]), /^text\/html; charset=utf-8$/, `not the console's error page: ${where}`);
        const label = parameter === undefined ? undefined : CONSOLE_LABELS[parameter];
        if (parameter !== undefined) assert.ok(answer.body.includes(parameter) || (label !== undefined && answer.body.includes(label)), `does not name ${parameter}: ${where}`);
      }
      assert.deepEqual(await t.countRows(), rows, `a console page changed the rows: ${where}`);
    }

    /** Where a parameter is sent: every GET route and every operator route, with ids that exist. */
    const parameterRoutes = () => operations.filter((operation) => operation.method === "GET" || operation.operator);
    const urlOf = (operation: ApiOperation) => fillPath(operation, { workItemId: validIds[0]!, workBatchId: validIds[1]!, deliveryId: 1, companyId: NO_SUCH_COMPANY });
    const tokenFor = (operation: ApiOperation) => (operation.operator ? operatorToken : tenant.token);
    const send = (operation: ApiOperation, query: string, label: () => string) => {
      const body = operation.jsonBody ? { payload: JSON.stringify(exampleBody(operation)), headers: { ...bearer(tokenFor(operation)), "content-type": "application/json" } } : { headers: bearer(tokenFor(operation)) };
      return inject({ method: operation.method, url: `${urlOf(operation)}?${query}`, ...body }, label);
    };
    /** A 4xx to a parameter in the wrong shape names it. */
    const assertNamed = (response: LightMyRequestResponse, name: string, label: () => string) => {
      if (response.statusCode >= 400) assert.ok(problemNames(response.body, name), `does not name ${name}: ${label()}\n-> ${response.statusCode} ${response.body.slice(0, 300)}`);
    };

    const jsonRoutes = () => operations.filter((operation) => operation.jsonBody && operation.method !== "GET");
    const baseBody = (operation: ApiOperation): Record<string, unknown> => {
      if (operation.path === ADD) return validWorkItem();
      if (operation.path === BULK) return { items: [validWorkItem(), validWorkItem({ plannedLoad: -1 }), validWorkItem({ customerReference: "second" })] };
      if (operation.path === LOGIN) return { apiKey: tenant.apiKey, secret: tenant.secret };
      return exampleBody(operation) as Record<string, unknown>;
    };

    test("JSON bodies of every JSON route", async () => {
      const routes = jsonRoutes();
      assert.ok(routes.length >= 2, `JSON routes: ${routes.map(describeOperation).join(", ")}`);
      for (const operation of routes) {
        const base = baseBody(operation);
        const text = JSON.stringify(base);
        const payload = fc.oneof(
          { weight: 8, arbitrary: mutatedBody(base) },
          { weight: 2, arbitrary: rawTree.map(serialize) },
          { weight: 1, arbitrary: deepNesting },
          { weight: 2, arbitrary: invalidUtf8(text) },
          { weight: 2, arbitrary: garbled(text) },
          { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
        );
        const request = fc.record({
          payload,
          contentType: contentTypes,
          encoding: contentEncodings,
          idempotencyKey: idempotencyKeys,
          authorization: authorizations(tenant.token),
          remoteAddress: fc.ipV4(),
        });
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const headers: Record<string, string> = { "content-type": r.contentType };
            if (r.encoding) headers["content-encoding"] = r.encoding;
            if (r.idempotencyKey !== undefined) headers["idempotency-key"] = r.idempotencyKey;
            if (r.authorization !== undefined) headers.authorization = r.authorization;
            const label = () => `${describeOperation(operation)} ${JSON.stringify(headers).slice(0, 300)} ${String(r.payload).slice(0, 300)}`;
            await inject({ method: operation.method, url: operation.path, headers, payload: r.payload, remoteAddress: r.remoteAddress }, label);
          }),
          fcOptions(RUNS.bodies / routes.length),
        );
      }
    });

    test("path ids of every route with parameters", async () => {
      const routes = operations.filter((operation) => operation.pathParams.length > 0);
      assert.ok(routes.length >= 2);
      const request = fc.record({
        operation: fc.constantFrom(...routes),
        id: pathIds(validIds),
        method: fc.option(fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD") as fc.Arbitrary<InjectOptions["method"]>, { nil: undefined, freq: 4 }),
        shape: fc.constantFrom("as-is", "lower", "upper", "trailing-slash", "double-slash"),
        authorization: authorizations(tenant.token),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let url = r.operation.path.replace(/\{[^}]+\}/g, r.id);
          if (r.shape === "lower") url = url.toLowerCase();
          if (r.shape === "upper") url = url.toUpperCase();
          if (r.shape === "trailing-slash") url = `${url}/`;
          if (r.shape === "double-slash") url = url.replace("/api/", "//api/");
          const method = r.method ?? r.operation.method;
          if (method === "HEAD") return;
          const headers = r.authorization === undefined ? {} : { authorization: r.authorization };
          await inject({ method, url, headers }, () => `${method} ${url} ${JSON.stringify(headers).slice(0, 200)}`);
        }),
        fcOptions(RUNS.paths),
      );
    });

    test("query strings of every route", async () => {
      // Each route with its own kind of token, so the operator API's queries reach its store reads.
      const request = fc.constantFrom(...operations.filter((o) => o.method === "GET" && o.pathParams.length === 0)).chain((operation) =>
        fc.record({
          operation: fc.constant(operation),
          query: queryStrings(operations.flatMap((o) => o.queryParams.map((p) => p.name))),
          authorization: authorizations(tokenFor(operation)),
        }),
      );
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const url = `${r.operation.path}?${r.query}`;
          const headers = r.authorization === undefined ? {} : { authorization: r.authorization };
          await inject({ method: "GET", url, headers }, () => `GET ${url.slice(0, 400)}`);
        }),
        fcOptions(RUNS.queries),
      );
    });

    test("every query parameter of every route, repeated, bracketed, very long and empty", async () => {
      const routes = parameterRoutes();
      assert.ok(routes.some((operation) => operation.queryParams.length > 0) && routes.some((operation) => operation.operator));
      for (const operation of routes) {
        const baseline = (await send(operation, "", () => describeOperation(operation))).statusCode;
        for (const parameter of operation.queryParams) {
          for (const query of parameterShapes(parameter.name, plausibleValue(parameter, validIds[0]!))) {
            const label = () => `${describeOperation(operation)}?${query.slice(0, 300)}`;
            assertNamed(await send(operation, query, label), parameter.name, label);
          }
        }
        // A name the route does not declare: a 400 naming it on the operator API, ignored elsewhere.
        for (const query of parameterShapes(UNKNOWN_PARAMETER, "1")) {
          const label = () => `${describeOperation(operation)}?${query.slice(0, 300)}`;
          const response = await send(operation, query, label);
          if (operation.operator) {
            assert.equal(response.statusCode, 400, label());
            assertNamed(response, UNKNOWN_PARAMETER, label);
          } else {
            assert.equal(response.statusCode, baseline, `as without the parameter: ${label()}`);
          }
        }
      }
    });

    test("query parameters in odd shapes with odd values", async () => {
      const declared = parameterRoutes().flatMap((operation) => operation.queryParams.map((parameter) => ({ operation, parameter })));
      const request = fc
        .constantFrom(...declared)
        .chain(({ operation, parameter }) =>
          fc.record({ operation: fc.constant(operation), parameter: fc.constant(parameter), value: parameterValue(plausibleValue(parameter, validIds[0]!)), shape: fc.nat({ max: 9 }) }),
        );
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const query = parameterShapes(r.parameter.name, r.value)[r.shape]!;
          const label = () => `${describeOperation(r.operation)}?${query.slice(0, 300)}`;
          assertNamed(await send(r.operation, query, label), r.parameter.name, label);
        }),
        fcOptions(RUNS.parameterShapes),
      );
    });

    test("every query parameter of every console page, repeated, bracketed, very long and empty", async () => {
      const pages: Array<{ path: string; names: readonly string[] }> = [
        { path: "/console", names: [] },
        { path: "/console/overview/live", names: [] },
        { path: "/console/work-items", names: WORK_ITEMS_QUERY },
        { path: `/console/work-items/${validIds[0]}`, names: WORK_ITEM_QUERY },
        { path: "/console/webhook-deliveries", names: DELIVERIES_QUERY },
        { path: "/console/audit", names: AUDIT_QUERY },
        { path: "/console/find", names: FIND_QUERY },
      ];
      const valueOf = (name: string) => CONSOLE_VALUES[name] ?? "1";
      for (const page of pages) {
        const baseline = (await consolePages.get(page.path)).statusCode;
        for (const name of page.names) {
          for (const query of parameterShapes(name, valueOf(name))) await checkPage(`${page.path}?${query}`, name);
        }
        // The console reads the names it knows and ignores others, as the integrator routes do.
        for (const query of parameterShapes(UNKNOWN_PARAMETER, "1")) await checkPage(`${page.path}?${query}`, undefined, baseline);
      }
      const request = fc
        .constantFrom(...pages.flatMap((page) => page.names.map((name) => ({ path: page.path, name }))))
        .chain(({ path, name }) => fc.record({ path: fc.constant(path), name: fc.constant(name), value: parameterValue(valueOf(name)), shape: fc.nat({ max: 9 }) }));
      await fc.assert(
        fc.asyncProperty(request, async (r) => checkPage(`${r.path}?${parameterShapes(r.name, r.value)[r.shape]!}`, r.name)),
        fcOptions(RUNS.consolePages),
      );
    });

    test("odd headers on every route", async () => {
      const names = fc.constantFrom(
        "accept", "accept-encoding", "accept-charset", "accept-language", "x-request-id", "x-forwarded-for", "x-forwarded-proto", "forwarded",
        "x-http-method-override", "expect", "range", "if-none-match", "cookie", "origin", "te", "upgrade", "x-real-ip", "content-type", "content-encoding",
        "idempotency-key", "x-custom",
      );
      const request = fc.record({
        operation: fc.constantFrom(...operations),
        headers: fc.array(fc.tuple(names, headerValue), { maxLength: 6 }),
        authorization: authorizations(tenant.token),
        withBody: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string> = {};
          for (const [name, value] of r.headers) headers[name] = value;
          if (r.authorization !== undefined) headers.authorization = r.authorization;
          const url = r.operation.path.replace(/\{[^}]+\}/g, String(validIds[0]));
          const payload = r.withBody || r.operation.jsonBody ? JSON.stringify(baseBody(r.operation)) : undefined;
          await inject(
            { method: r.operation.method, url, headers, ...(payload === undefined ? {} : { payload }) },
            () => `${r.operation.method} ${url} ${JSON.stringify(headers).slice(0, 400)}`,
          );
        }),
        fcOptions(RUNS.headers),
      );
    });

    test("byte-level requests over a real socket", async () => {
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      const port = (t.app.server.address() as AddressInfo).port;
      const body = JSON.stringify(validWorkItem());
      const request = fc.record({
        method: fc.constantFrom("GET", "POST", "DELETE", "PUT", "get", "FOO", "POST "),
        target: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...operations.map((o) => o.path.replace(/\{[^}]+\}/g, String(validIds[0])))) },
          { weight: 1, arbitrary: fc.constantFrom("*", "http://127.0.0.1/healthz", "//healthz", "/%", "/\u00ff", `/${"a".repeat(9000)}`, "/api/AuthorityRvdm/WorkItem/%00", "healthz", "/healthz#x", "/healthz?a=%zz") },
        ),
        version: fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", ""),
        contentType: contentTypes,
        authorization: authorizations(tenant.token),
        extra: fc.array(
          fc.oneof(
            fc.tuple(fc.constantFrom("x-a", "accept", "idempotency-key", "x-request-id"), headerValue).map(([n, v]) => Buffer.from(`${n}: ${v}\r\n`, "latin1")),
            fc.constantFrom(
              "x-null: a\u0000b\r\n", "x-del: \u007f\r\n", "bad header: x\r\n", ": empty-name\r\n", "x-fold: a\r\n  folded\r\n", "content-length: 5\r\ncontent-length: 6\r\n",
              "transfer-encoding: chunked\r\n", "transfer-encoding: gzip, chunked\r\n", "content-length: -1\r\n", "content-length: abc\r\n", "x-no-colon\r\n",
            ).map((line) => Buffer.from(line, "latin1")),
          ),
          { maxLength: 3 },
        ),
        payload: fc.oneof(fc.constant(Buffer.from(body)), invalidUtf8(body), mutatedBody(validWorkItem()).map((s) => Buffer.from(s)), fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b))),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headLines = Buffer.concat([
            Buffer.from(`${r.method} ${r.target} ${r.version}\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: ${r.contentType}\r\ncontent-length: ${r.payload.length}\r\n`, "latin1"),
            ...(r.authorization === undefined ? [] : [Buffer.from(`authorization: ${r.authorization}\r\n`, "latin1")]),
            ...r.extra,
            Buffer.from("\r\n"),
          ]);
          const label = () => `${headLines.toString("latin1").slice(0, 500)} + ${r.payload.length} bytes`;
          let answer: RawResponse;
          try {
            answer = await rawRequest(port, Buffer.concat([headLines, r.payload]), 5000);
          } catch (error) {
            assert.fail(`no answer: ${(error as Error).message}\n${label()}`);
          }
          await check(answer, label, r.target);
        }),
        fcOptions(RUNS.socket),
      );
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, "the server stays up");
    });

    test("enough requests were sent", () => {
      const expected = index === 0 ? Math.round(MIN_REQUESTS * Math.min(1, SCALE)) : 1;
      assert.ok(sent >= expected, `${sent} requests, at least ${expected} required`);
      const histogram = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(", ");
      process.stderr.write(`fuzz [${backend.name}]: ${sent} requests checked (${histogram})\n`);
    });
  });
}
