/**
 * The bearer guard remembers the last header a keep-alive connection passed with. These tests
 * keep every request on ONE real TCP connection and check that the memory never lets through
 * what a fresh connection would refuse: another token, a tampered one, an expired one, a
 * revoked key's.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Agent, request } from "undici";
import { revokeKey } from "../../src/admin/admin.ts";
import { availableBackends } from "../helpers/backends.ts";
import { bearer, createTestApp, type TestApp } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of await availableBackends()) {
  describe(`bearer guard on one keep-alive connection [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let t: TestApp;
    let baseUrl: string;
    let agent: Agent;
    let sockets = 0;
    before(async () => {
      t = await createTestApp(backend, { TOKEN_TTL_SECONDS: "2" });
      t.app.server.on("connection", () => (sockets += 1));
      baseUrl = await t.app.listen({ port: 0, host: "127.0.0.1" });
      agent = new Agent({ connections: 1, pipelining: 1 });
    });
    after(async () => {
      await agent.close();
      await t.close();
    });

    const ping = async (headers: Record<string, string>) => {
      const response = await request(`${baseUrl}/api/AuthorityRvdm/Ping`, { dispatcher: agent, headers });
      await response.body.text();
      return response.statusCode;
    };

    test("another, tampered or foreign token on the same connection is judged afresh", async () => {
      const first = await t.tenant(301);
      const second = await t.tenant(302);
      assert.equal(await ping(bearer(first.token)), 200);
      assert.equal(await ping(bearer(first.token)), 200);
      const tampered = first.token.slice(0, -2) + (first.token.endsWith("AA") ? "BB" : "AA");
      assert.equal(await ping(bearer(tampered)), 401);
      assert.equal(await ping(bearer(second.token)), 200);
      assert.equal(await ping({ authorization: `Basic ${first.token}` }), 401);
      assert.equal(await ping({}), 401);
      assert.equal(await ping(bearer(first.token)), 200);
      assert.equal(sockets, 1, "every request went over the one connection");
    });

    test("a remembered token still expires, and a revoked key's token is refused within 5 s", async () => {
      const tenant = await t.tenant(303);
      assert.equal(await ping(bearer(tenant.token)), 200);
      await sleep(3_100); // TOKEN_TTL_SECONDS=2: past exp
      assert.equal(await ping(bearer(tenant.token)), 401, "expired while remembered");

      const revoked = await t.tenant(304);
      assert.equal(await ping(bearer(revoked.token)), 200);
      await revokeKey(t.store, revoked.keyId);
      const deadline = Date.now() + 5_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        status = await ping(bearer(revoked.token));
        if (status === 200) await sleep(100);
      }
      assert.equal(status, 401, "refused within 5 s on the connection that had passed with it");
      assert.equal(sockets, 1);
    });
  });
}
