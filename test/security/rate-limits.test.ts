/**
 * Requests per company (token bucket) and the sharing of limiter state through Redis
 * (SPEC §8). The Redis tests use the real Redis on the machine.
 */
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { buildApp } from "../../src/app.ts";
import { createKey } from "../../src/admin/admin.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { claimsFor, forgeToken } from "../helpers/auth-matrix.ts";
import { availableBackends, openFreshStore } from "../helpers/backends.ts";
import { CLOSED_REDIS_URL, REDIS_URL, redisSkipReason } from "../helpers/redis.ts";
import { TEST_JWT_SECRET, bearer, createTestApp, problem, type TestApp, type Tenant } from "../helpers/test-app.ts";

const PING = "/api/AuthorityRvdm/Ping";
const LOGIN = "/api/Login/Authenticate";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of await availableBackends()) {
  describe(`requests per company [${backend.name}]`, () => {
    let t: TestApp;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      t = await createTestApp(backend, { RATE_LIMIT_TENANT_RPS: "5", RATE_LIMIT_TENANT_BURST: "10" });
      a = await t.tenant(701);
      b = await t.tenant(702);
    });
    after(() => t.close());

    const ping = (tenant: Tenant) => t.app.inject({ url: PING, headers: bearer(tenant.token) });

    test("a burst of BURST passes, the next gets 429 with Retry-After, other companies are unaffected", async () => {
      const burst = await Promise.all(Array.from({ length: 10 }, () => ping(a)));
      assert.deepEqual(burst.map((r) => r.statusCode), Array(10).fill(200));
      const over = await ping(a);
      assert.equal(over.statusCode, 429);
      assert.equal(over.headers["retry-after"], "1");
      assert.equal(problem(over).type, "urn:work-item-api:problem:rate-limited");
      assert.equal((await ping(b)).statusCode, 200, "another company has its own bucket");

      // After a second the sustained rate is available again, but not the burst.
      await sleep(1100);
      const next = await Promise.all(Array.from({ length: 7 }, () => ping(a)));
      assert.deepEqual(next.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 429, 429]);
    });

    test("requests with a bad token do not spend a company's budget", async () => {
      const c = await t.tenant(703);
      const forged = forgeToken(claimsFor(c), { secret: "not-the-server-secret-not-the-server-secret" });
      for (let i = 0; i < 30; i++) assert.equal((await t.app.inject({ url: PING, headers: bearer(forged) })).statusCode, 401);
      const real = await Promise.all(Array.from({ length: 10 }, () => ping(c)));
      assert.deepEqual(real.map((r) => r.statusCode), Array(10).fill(200));
    });
  });

  describe(`rate limit switched off [${backend.name}]`, () => {
    test("RATE_LIMIT_TENANT_RPS=0 turns the per-company limit off", async () => {
      const t = await createTestApp(backend, { RATE_LIMIT_TENANT_RPS: "0", RATE_LIMIT_TENANT_BURST: "1" });
      try {
        const tenant = await t.tenant(704);
        const answers = await Promise.all(Array.from({ length: 300 }, () => t.app.inject({ url: PING, headers: bearer(tenant.token) })));
        assert.deepEqual(new Set(answers.map((r) => r.statusCode)), new Set([200]));
      } finally {
        await t.close();
      }
    });
  });
}

describe("limits shared through Redis", async () => {
  const skip = await redisSkipReason();
  const [backend] = await availableBackends();
  // Fresh names per run: Redis outlives the test, and other runs may share it.
  const address = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  const companyId = 800_000 + randomInt(100_000);

  test("two processes' failures on one address add up", { skip }, async () => {
    const [one, two] = [await createTestApp(backend!, { REDIS_URL }), await createTestApp(backend!, { REDIS_URL })];
    try {
      const wrong = (app: TestApp, i: number) => app.app.inject({ method: "POST", url: LOGIN, remoteAddress: address, payload: { apiKey: `wia_${companyId}_0123456789abcdef`, secret: `wis_${i}` } });
      for (let i = 0; i < 5; i++) assert.equal((await wrong(one, i)).statusCode, 401);
      for (let i = 5; i < 10; i++) assert.equal((await wrong(two, i)).statusCode, 401);
      assert.equal((await wrong(one, 10)).statusCode, 429, "the eleventh failure, counted across both");
      assert.equal((await wrong(two, 11)).statusCode, 429);
    } finally {
      await one.close();
      await two.close();
    }
  });

  test("two processes share one company's bucket", { skip }, async () => {
    const env = { REDIS_URL, RATE_LIMIT_TENANT_RPS: "5", RATE_LIMIT_TENANT_BURST: "10" };
    const [one, two] = [await createTestApp(backend!, env), await createTestApp(backend!, env)];
    try {
      const tenantOne = await one.tenant(companyId);
      const token = forgeToken(claimsFor(tenantOne));
      // The same company id and key exist in the second app's store as well.
      await two.store.createCompany({ companyId, name: "twin" });
      await two.store.createApiKey({ companyId, keyId: tenantOne.keyId, name: null, secretHash: "0".repeat(64) });
      const ping = (app: TestApp) => app.app.inject({ url: PING, headers: bearer(token) });
      const first = await Promise.all([...Array.from({ length: 5 }, () => ping(one)), ...Array.from({ length: 5 }, () => ping(two))]);
      assert.deepEqual(first.map((r) => r.statusCode), Array(10).fill(200));
      assert.equal((await ping(two)).statusCode, 429, "the bucket is shared");
      assert.equal((await ping(one)).statusCode, 429);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe("Redis unreachable", () => {
  test("limits fall back to this process's memory, with a warning; requests never fail", async () => {
    const [backend] = await availableBackends();
    const fresh = await openFreshStore(backend!);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ DATABASE_URL: fresh.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, REDIS_URL: CLOSED_REDIS_URL, LOG_LEVEL: "warn", RATE_LIMIT_TENANT_RPS: "5", RATE_LIMIT_TENANT_BURST: "5" });
    const app = await buildApp(config, { store: fresh.store, logger: createLogger(config, sink) });
    try {
      const key = await createKey(fresh.store, { companyId: 705 });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        statuses.push((await app.inject({ method: "POST", url: LOGIN, remoteAddress: "192.0.2.77", payload: { apiKey: key.apiKey, secret: `wis_${i}` } })).statusCode);
      }
      assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429], "the in-memory twin still limits");
      const login = await app.inject({ method: "POST", url: LOGIN, remoteAddress: "192.0.2.78", payload: { apiKey: key.apiKey, secret: key.secret } });
      assert.equal(login.statusCode, 200);
      const token = login.json<{ bearerToken: string }>().bearerToken;
      const pings = await Promise.all(Array.from({ length: 7 }, () => app.inject({ url: PING, headers: bearer(token) })));
      assert.deepEqual(pings.map((r) => r.statusCode).sort(), [200, 200, 200, 200, 200, 429, 429]);
      assert.ok(lines.some((line) => /Redis for rate limits is unreachable/.test(line)), `a warning is logged; got ${lines.join("")}`);
    } finally {
      await app.close();
      await fresh.cleanup();
    }
  });
});
