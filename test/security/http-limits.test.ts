/**
 * Defences against slow and oversized clients over real HTTP: the body limit is enforced before
 * the body is read, a huge Authorization header still gets a 401 problem, heads beyond the
 * limit get a 431 problem, slow clients are cut off, and every such answer is problem+json.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { head, openRaw, rawRequest, type RawResponse } from "../helpers/raw-http.ts";
import { createTestApp, type TestApp, type Tenant } from "../helpers/test-app.ts";

const ADD = "/api/AuthorityRvdm/AddWorkItemCreate";
const BULK = "/api/AuthorityRvdm/AddWorkItemCreateBulk";
const LOGIN = "/api/Login/Authenticate";

function assertProblem(response: RawResponse, status: number): Record<string, unknown> {
  assert.equal(response.status, status, response.body);
  assert.match(response.headers["content-type"] ?? "", /^application\/problem\+json/);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  assert.equal(body.status, status);
  for (const field of ["type", "title", "detail", "instance", "traceId"]) assert.equal(typeof body[field], "string", field);
  return body;
}

for (const backend of await availableBackends()) {
  describe(`HTTP limits over a real socket [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    let port: number;
    before(async () => {
      t = await createTestApp(backend, { HEADERS_TIMEOUT_MS: "1000", REQUEST_TIMEOUT_MS: "2000", KEEP_ALIVE_TIMEOUT_MS: "1000" });
      tenant = await t.tenant(801);
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => t.close());

    for (const [name, path, auth] of [["login", LOGIN, false], ["AddWorkItemCreate", ADD, true], ["AddWorkItemCreateBulk", BULK, true]] as const) {
      test(`${name}: a 50 MB Content-Length gets 413 before the body is sent`, async () => {
        const before = await t.countRows();
        const exchange = openRaw(
          port,
          head("POST", path, {
            "content-type": "application/json",
            "content-length": 50_000_000,
            ...(auth ? { authorization: `Bearer ${tenant.token}` } : {}),
          }) + '{"customerReference": "',
        );
        const response = await exchange.response;
        exchange.socket.destroy();
        assertProblem(response, 413);
        assert.ok(response.ms < 2000, `answered in ${response.ms} ms, without waiting for the body`);
        assert.deepEqual(await t.countRows(), before);
      });
    }

    test("a chunked body (no Content-Length) is refused as soon as it passes the limit, before it ends", async () => {
      const exchange = openRaw(port, head("POST", ADD, { "content-type": "application/json", "transfer-encoding": "chunked", authorization: `Bearer ${tenant.token}` }));
      // Just past the limit, and no terminating chunk: the answer cannot wait for the end.
      const chunk = Buffer.alloc(16 * 1024, "a");
      for (let sent = 0; sent <= t.config.maxBodyBytes; sent += chunk.length) exchange.socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`);
      const response = await exchange.response;
      exchange.socket.destroy();
      assertProblem(response, 413);
    });

    test("a 100 KB Authorization header gets a 401 problem with WWW-Authenticate", async () => {
      const response = await rawRequest(port, head("GET", "/api/AuthorityRvdm/Ping", { authorization: `Bearer ${"a".repeat(100 * 1024)}` }));
      assertProblem(response, 401);
      assert.match(response.headers["www-authenticate"] ?? "", /^Bearer realm="work-item-api", error="invalid_token"/);
    });

    test("a head beyond MAX_HEADER_BYTES gets a 431 problem", async () => {
      const response = await rawRequest(port, head("GET", "/api/AuthorityRvdm/Ping", { "x-filler": "a".repeat(t.config.maxHeaderBytes + 1024) }));
      assertProblem(response, 431);
    });

    test("a request that is not HTTP gets a 400 problem", async () => {
      assertProblem(await rawRequest(port, "HELLO THERE\r\n\r\n"), 400);
      assertProblem(await rawRequest(port, `GET / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n`), 400);
    });

    test("a client that never finishes its headers is cut off with 408", async () => {
      const exchange = openRaw(port, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: ");
      const timer = setInterval(() => exchange.socket.write("a"), 200);
      try {
        const response = await exchange.response;
        assertProblem(response, 408);
        assert.ok(response.ms < 4000, `cut off after ${response.ms} ms (HEADERS_TIMEOUT_MS=1000)`);
      } finally {
        clearInterval(timer);
        exchange.socket.destroy();
      }
    });

    test("a client that stalls its body is cut off", async () => {
      const exchange = openRaw(port, head("POST", LOGIN, { "content-type": "application/json", "content-length": 100 }) + '{"apiKey":');
      const startedAt = Date.now();
      await exchange.closed;
      const ms = Date.now() - startedAt;
      assert.ok(ms < 5000, `closed after ${ms} ms (REQUEST_TIMEOUT_MS=2000)`);
      const answer = await exchange.response.catch(() => undefined);
      if (answer) assert.ok(answer.status === 408 || answer.status === 400, `status ${answer.status}`);
    });

    test("an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS", async () => {
      const exchange = openRaw(port, head("GET", "/healthz", {}));
      assert.equal((await exchange.response).status, 200);
      const answeredAt = Date.now();
      await exchange.closed;
      const idle = Date.now() - answeredAt;
      assert.ok(idle >= 800 && idle < 3000, `closed after ${idle} ms idle`);
    });
  });
}
