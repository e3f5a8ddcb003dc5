/**
 * Brute force on POST /api/Login/Authenticate (SPEC §8): failed logins are limited per client
 * address and per API key, without letting an attacker lock a legitimate client out.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { metricValue } from "../helpers/prometheus.ts";
import { createTestApp, problem, type TestApp, type Tenant } from "../helpers/test-app.ts";

const LOGIN = "/api/Login/Authenticate";

for (const backend of await availableBackends()) {
  describe(`brute force on login [${backend.name}]`, () => {
    let t: TestApp;
    let victim: Tenant;
    before(async () => {
      t = await createTestApp(backend, { LOGIN_FAILURES_PER_MINUTE: "10" });
      victim = await t.tenant(601);
    });
    after(() => t.close());

    const login = (remoteAddress: string, payload: unknown) => t.app.inject({ method: "POST", url: LOGIN, remoteAddress, payload: payload as object });
    const wrong = (apiKey: string, i = 0) => ({ apiKey, secret: `wis_wrong-guess-${i}` });

    test("50 wrong secrets from one address: 401 ten times, then 429 with Retry-After", async () => {
      const attacker = "203.0.113.7";
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) {
        const response = await login(attacker, wrong(victim.apiKey, i));
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          const retryAfter = Number(response.headers["retry-after"]);
          assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
          assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
          assert.equal(problem(response).type, "urn:work-item-api:problem:rate-limited");
        }
      }
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(40).fill(429)]);

      const rightFromAttacker = await login(attacker, { apiKey: victim.apiKey, secret: victim.secret });
      assert.equal(rightFromAttacker.statusCode, 429, "the per-key rule: this address guessed at this key");
      const otherKeyFromAttacker = await login(attacker, wrong("wia_999_0123456789abcdef"));
      assert.equal(otherKeyFromAttacker.statusCode, 429, "the block covers every key from that address");

      const rightFromElsewhere = await login("198.51.100.20", { apiKey: victim.apiKey, secret: victim.secret });
      assert.equal(rightFromElsewhere.statusCode, 200, "a right secret from another address still works");
      assert.ok(rightFromElsewhere.json<{ bearerToken: string }>().bearerToken);
    });

    test("one integrator's mistakes behind a shared address never refuse another's right key and secret", async () => {
      const shared = "203.0.113.50";
      const careless = await t.tenant(611);
      const careful = await t.tenant(612);
      for (let i = 0; i < 12; i++) await login(shared, wrong(careless.apiKey, i));
      assert.equal((await login(shared, wrong("wia_998_0123456789abcdef"))).statusCode, 429, "the address is over its limit for wrong credentials");
      const right = await login(shared, { apiKey: careful.apiKey, secret: careful.secret });
      assert.equal(right.statusCode, 200, "a right key and secret still log in");
      assert.ok(right.json<{ bearerToken: string }>().bearerToken);
      assert.equal((await login(shared, wrong(careful.apiKey, 1))).statusCode, 429, "a wrong secret from it is refused with 429, not checked into a 401");
      assert.equal((await login(shared, { apiKey: careless.apiKey, secret: careless.secret })).statusCode, 429, "the per-key limit is unchanged");
    });

    test("a key under attack: an address that failed on it is refused, a clean one still gets its try", async () => {
      const key = (await t.tenant(602)).apiKey;
      // Ten addresses fail once each: the per-key count reaches the limit, no address is blocked.
      for (let i = 0; i < 10; i++) assert.equal((await login(`192.0.2.${10 + i}`, wrong(key, i))).statusCode, 401);
      assert.equal((await login("192.0.2.10", wrong(key, 99))).statusCode, 429, "an address that already failed on this key");
      assert.equal((await login("192.0.2.200", wrong(key, 100))).statusCode, 401, "a clean address gets one try");
      assert.equal((await login("192.0.2.200", wrong(key, 101))).statusCode, 429, "and no second one");
      assert.equal((await login("192.0.2.10", wrong("wia_603_0123456789abcdef"))).statusCode, 401, "other keys from that address are not affected");
    });

    test("a flood from one address is refused before any secret is checked, on one key or on many (SPEC §20)", async () => {
      const signIns = async () => {
        const text = (await t.app.inject({ url: "/metrics" })).body;
        return { failed: metricValue(text, "work_item_api_sign_in_attempts_total", { surface: "api", outcome: "failed" }), refused: metricValue(text, "work_item_api_sign_in_attempts_total", { surface: "api", outcome: "refused" }) };
      };
      const target = (await t.tenant(621)).apiKey;
      let before = await signIns();
      const oneKey: number[] = [];
      for (let i = 0; i < 100; i++) oneKey.push((await login("203.0.113.200", wrong(target, i))).statusCode);
      assert.deepEqual(oneKey, [...Array(10).fill(401), ...Array(90).fill(429)]);
      let after = await signIns();
      assert.deepEqual({ failed: after.failed - before.failed, refused: after.refused - before.refused }, { failed: 10, refused: 90 }, "only the ten within the limit were checked");

      before = after;
      const manyKeys: number[] = [];
      for (let i = 0; i < 100; i++) manyKeys.push((await login("203.0.113.201", wrong(`wia_${700 + i}_0123456789abcdef`, i))).statusCode);
      after = await signIns();
      // Ten 401s, then ten more checked (a clean key from an address over its limit: 429 after the check), then none.
      assert.deepEqual(manyKeys, [...Array(10).fill(401), ...Array(90).fill(429)]);
      assert.deepEqual({ failed: after.failed - before.failed, refused: after.refused - before.refused }, { failed: 20, refused: 80 }, "at most twice the limit checked, however many keys");
    });

    test("concurrent guesses cannot slip past the limit", async () => {
      const fresh = await t.tenant(607);
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => login("203.0.113.99", wrong(fresh.apiKey, i))));
      const counts = { 401: 0, 429: 0 } as Record<number, number>;
      for (const response of responses) counts[response.statusCode] = (counts[response.statusCode] ?? 0) + 1;
      assert.deepEqual(counts, { 401: 10, 429: 20 });
    });

    test("only failures count: successes and malformed requests do not", async () => {
      const tenant = await t.tenant(604);
      for (let i = 0; i < 25; i++) assert.equal((await login("198.51.100.50", { apiKey: tenant.apiKey, secret: tenant.secret })).statusCode, 200);
      for (let i = 0; i < 25; i++) assert.equal((await login("198.51.100.50", { apiKey: tenant.apiKey })).statusCode, 400);
      for (let i = 0; i < 9; i++) assert.equal((await login("198.51.100.50", wrong(tenant.apiKey, i))).statusCode, 401);
      assert.equal((await login("198.51.100.50", { apiKey: tenant.apiKey, secret: tenant.secret })).statusCode, 200);
    });

    test("X-Forwarded-For is not believed by default", async () => {
      const tenant = await t.tenant(605);
      for (let i = 0; i < 10; i++) {
        const response = await t.app.inject({ method: "POST", url: LOGIN, remoteAddress: "203.0.113.150", headers: { "x-forwarded-for": `10.9.9.${i}` }, payload: wrong(tenant.apiKey, i) });
        assert.equal(response.statusCode, 401);
      }
      const spoofed = await t.app.inject({ method: "POST", url: LOGIN, remoteAddress: "203.0.113.150", headers: { "x-forwarded-for": "10.9.9.200" }, payload: wrong(tenant.apiKey, 11) });
      assert.equal(spoofed.statusCode, 429, "a fresh X-Forwarded-For does not buy a fresh budget");
    });
  });
}

describe("brute force behind a trusted proxy", () => {
  test("TRUST_PROXY names the proxy whose X-Forwarded-For is believed", async () => {
    const [backend] = await availableBackends();
    const t = await createTestApp(backend!, { TRUST_PROXY: "10.0.0.1", LOGIN_FAILURES_PER_MINUTE: "3" });
    try {
      const tenant = await t.tenant(606);
      const viaProxy = (client: string) =>
        t.app.inject({ method: "POST", url: LOGIN, remoteAddress: "10.0.0.1", headers: { "x-forwarded-for": client }, payload: { apiKey: tenant.apiKey, secret: "wis_wrong" } });
      for (let i = 0; i < 3; i++) assert.equal((await viaProxy("198.51.100.1")).statusCode, 401);
      assert.equal((await viaProxy("198.51.100.1")).statusCode, 429);
      assert.equal((await viaProxy("198.51.100.2")).statusCode, 401, "another client behind the same proxy has its own budget");
      assert.equal((await login(t, "198.51.100.3", { apiKey: tenant.apiKey, secret: tenant.secret })).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});

const login = (t: TestApp, remoteAddress: string, payload: object) => t.app.inject({ method: "POST", url: LOGIN, remoteAddress, payload });
