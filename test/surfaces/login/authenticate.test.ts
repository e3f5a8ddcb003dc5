import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, createTestApp, problem, type TestApp, type Tenant } from "../../helpers/test-app.ts";

const URL = "/api/Login/Authenticate";

for (const backend of await availableBackends()) {
  describe(`Authenticate [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(backend, { TOKEN_TTL_SECONDS: "1200" });
      tenant = await t.tenant(501);
    });
    after(() => t.close());

    const login = (payload: unknown) => t.app.inject({ method: "POST", url: URL, payload: payload as object });

    test("issues a token whose claims and expires follow SPEC §2", async () => {
      const before = Math.floor(Date.now() / 1000);
      const response = await login({ apiKey: tenant.apiKey, secret: tenant.secret });
      assert.equal(response.statusCode, 200);
      const { bearerToken, expires } = response.json<{ bearerToken: string; expires: string }>();
      const [header, payload] = bearerToken.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url").toString()) as Record<string, unknown>);
      assert.equal(header!.alg, "HS256");
      const claims = payload!;
      assert.equal(claims.CompanyId, "501");
      assert.equal(claims.role, "ApiKey");
      assert.equal(claims.sub, tenant.keyId);
      for (const claim of ["jti", "iat", "nbf", "exp", "iss", "aud"]) assert.ok(claims[claim] !== undefined, claim);
      assert.equal(Number(claims.exp) - Number(claims.iat), 1200);
      assert.ok(Number(claims.iat) >= before);
      assert.match(expires, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(Date.parse(expires) / 1000, claims.exp);
    });

    test("binds property names case-insensitively", async () => {
      assert.equal((await login({ ApiKey: tenant.apiKey, SECRET: tenant.secret })).statusCode, 200);
    });

    test("unknown key, wrong secret and revoked key give the same 401", async () => {
      const revoked = await t.tenant(502);
      await t.store.revokeApiKey(revoked.keyId);
      // Key rows are cached for up to 2 s (the revocation promise is 5 s, as for tokens).
      const revokedAt = Date.now();
      let revokedAnswer = await login({ apiKey: revoked.apiKey, secret: revoked.secret });
      while (revokedAnswer.statusCode === 200 && Date.now() - revokedAt < 6000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        revokedAnswer = await login({ apiKey: revoked.apiKey, secret: revoked.secret });
      }
      assert.ok(Date.now() - revokedAt <= 5000, `revoked key refused after ${Date.now() - revokedAt} ms`);
      const answers = await Promise.all([
        login({ apiKey: "wia_501_0000000000000000", secret: tenant.secret }),
        login({ apiKey: tenant.apiKey, secret: `${tenant.secret}x` }),
        revokedAnswer,
        login({ apiKey: "not-a-key", secret: "x" }),
      ]);
      const bodies = answers.map((r) => {
        assert.equal(r.statusCode, 401);
        const { traceId: _traceId, ...rest } = problem(r);
        return rest;
      });
      for (const body of bodies) assert.deepEqual(body, bodies[0]);
    });

    test("a revoked key's tokens stop working", async () => {
      const soon = await t.tenant(503);
      const ping = () => t.app.inject({ url: "/api/AuthorityRvdm/Ping", headers: bearer(soon.token) });
      assert.equal((await ping()).statusCode, 200);
      await t.store.revokeApiKey(soon.keyId);
      const deadline = Date.now() + 5000;
      let status = 200;
      while (Date.now() < deadline && status === 200) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        status = (await ping()).statusCode;
      }
      assert.equal(status, 401, "refused within 5 s");
    });

    test("missing fields are a 400 listing both", async () => {
      const response = await login({});
      assert.equal(response.statusCode, 400);
      assert.deepEqual(Object.keys(problem(response).errors ?? {}).sort(), ["apiKey", "secret"]);
    });
  });
}
