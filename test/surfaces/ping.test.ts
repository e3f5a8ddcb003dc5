import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPongText, formatPongTime } from "../../src/surfaces/shared/ping.ts";
import { assertRouteIsGuarded } from "../helpers/auth-matrix.ts";
import { availableBackends } from "../helpers/backends.ts";
import { bearer, createTestApp, type TestApp, type Tenant } from "../helpers/test-app.ts";

test("formatPongTime writes dddd, d MMMM yyyy HH:mm:ss in the given zone", () => {
  const date = new Date("2026-11-21T14:03:12Z");
  assert.equal(formatPongTime(date, "UTC"), "Saturday, 21 November 2026 14:03:12");
  assert.equal(formatPongTime(date, "Europe/Amsterdam"), "Saturday, 21 November 2026 15:03:12");
  assert.equal(formatPongTime(new Date("2026-01-05T00:00:05Z"), "UTC"), "Monday, 5 January 2026 00:00:05");
});

test("the Pong text follows the clock second by second", () => {
  const pong = createPongText("UTC");
  const at = Date.parse("2026-11-21T14:03:12Z");
  assert.equal(pong(at), "Pong --> Saturday, 21 November 2026 14:03:12");
  assert.equal(pong(at + 999), "Pong --> Saturday, 21 November 2026 14:03:12");
  assert.equal(pong(at + 1000), "Pong --> Saturday, 21 November 2026 14:03:13");
  assert.equal(pong(at - 1), "Pong --> Saturday, 21 November 2026 14:03:11");
});

for (const backend of await availableBackends()) {
  describe(`Ping routes [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(11);
    });
    after(() => t.close());

    for (const url of ["/api/AuthorityRvdm/Ping", "/api/VlmMad/Ping", "/api/authorityrvdm/ping", "/API/VLMMAD/PING"]) {
      test(`${url} answers Pong --> with the time as text/plain`, async () => {
        const response = await t.app.inject({ method: "GET", url, headers: bearer(tenant.token) });
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers["content-type"], "text/plain; charset=utf-8");
        assert.match(response.body, /^Pong --> (Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{1,2} [A-Z][a-z]+ \d{4} \d{2}:\d{2}:\d{2}$/);
      });
    }

    test("both pings are guarded", async () => {
      await assertRouteIsGuarded(t, tenant, { method: "GET", url: "/api/AuthorityRvdm/Ping" });
      await assertRouteIsGuarded(t, tenant, { method: "GET", url: "/api/VlmMad/Ping" });
    });

    test("a wrong method on a known path is 405 with Allow; an unknown path is 404", async () => {
      const wrong = await t.app.inject({ method: "DELETE", url: "/api/AuthorityRvdm/Ping", headers: bearer(tenant.token) });
      assert.equal(wrong.statusCode, 405);
      assert.match(String(wrong.headers.allow), /GET/);
      const unknown = await t.app.inject({ method: "GET", url: "/api/Nope" });
      assert.equal(unknown.statusCode, 404);
      assert.match(String(unknown.headers["content-type"]), /^application\/problem\+json/);
    });

    test("healthz, readyz, openapi.json and docs answer without auth", async () => {
      assert.equal((await t.app.inject({ url: "/healthz" })).statusCode, 200);
      assert.deepEqual((await t.app.inject({ url: "/readyz" })).json(), { status: "ready" });
      const openapi = (await t.app.inject({ url: "/openapi.json" })).json<{ openapi: string; paths: Record<string, unknown> }>();
      assert.equal(openapi.openapi, "3.1.0");
      for (const path of ["/api/Login/Authenticate", "/api/AuthorityRvdm/Ping", "/api/VlmMad/Ping", "/api/AuthorityRvdm/AddWorkItemCreate", "/api/AuthorityRvdm/WorkItem/{workItemId}", "/api/AuthorityRvdm/WorkBatch/{workBatchId}", "/api/AuthorityRvdm/WorkItems"]) {
        assert.ok(openapi.paths[path], `openapi has ${path}`);
      }
      const docs = await t.app.inject({ url: "/docs/" });
      assert.equal(docs.statusCode, 200);
    });
  });
}
