/**
 * JWT attack matrix on every protected route of /openapi.json: each forged, expired, confused,
 * stripped, tampered, oversized or revoked token gets 401 with WWW-Authenticate, a problem body
 * and never data, and stores nothing.
 */
import assert from "node:assert/strict";
import { createHmac, generateKeyPairSync } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { createSigner } from "fast-jwt";
import { keyIdFor } from "../../src/auth/tokens.ts";
import { FOLLOW_UP_KINDS, type FollowUpKind } from "../../src/domain/work-item-kinds.ts";
import { claimsFor, forgeToken } from "../helpers/auth-matrix.ts";
import { availableBackends } from "../helpers/backends.ts";
import { runOneBotPass } from "../helpers/bot-harness.ts";
import { apiOperations, describeOperation, exampleBody, fillPath, type ApiOperation } from "../helpers/openapi-routes.ts";
import { TEST_JWT_SECRET, bearer, createTestApp, validWorkItem, type TestApp, type Tenant } from "../helpers/test-app.ts";

/**
 * The body of each kind of follow-up's route, besides its original. A change's schema example
 * names a fixed exportDate, which a test run may pass; a kind not here sends its schema's example.
 */
const FOLLOW_UP_BODIES: Partial<Record<FollowUpKind, Record<string, unknown>>> = {
  change: { customerReference: "VICTIM-C", changes: { plannedLoad: 2 } },
  withdraw: { customerReference: "VICTIM-W", reason: "called off" },
};
const followUpOf = (path: string) => FOLLOW_UP_KINDS.find((kind) => path.endsWith(`/AddWorkItem${kind[0]!.toUpperCase()}${kind.slice(1)}`));

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const hs256 = (input: string, secret: string | Buffer = TEST_JWT_SECRET) => createHmac("sha256", secret).update(input).digest("base64url");

/** A token with any header, HMAC-signed with our secret unless told otherwise. */
function signed(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string | Buffer = TEST_JWT_SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${hs256(input, secret)}`;
}

function attacks(victim: Tenant, revoked: Tenant, other: Tenant): Array<[string, string]> {
  const claims = claimsFor(victim);
  const now = Math.floor(Date.now() / 1000);
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const rs256 = createSigner({ key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), algorithm: "RS256" })({ ...claims });
  const publicPem = publicKey.export({ type: "spki", format: "pem" }).toString();
  const [header, payload, signature] = victim.token.split(".") as [string, string, string];
  const tamperedPayload = b64({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), CompanyId: String(other.companyId) });
  return [
    ["alg none", forgeToken(claims, { alg: "none" })],
    ["alg None with a signature", `${b64({ alg: "None", typ: "JWT" })}.${b64(claims)}.${signature}`],
    ["alg NONE", `${b64({ alg: "NONE" })}.${b64(claims)}.`],
    ["HS/RS confusion: HMAC with our secret under an RS256 header", signed({ alg: "RS256", typ: "JWT" }, claims)],
    ["HS/RS confusion: HMAC keyed with an RSA public key", signed({ alg: "HS256", typ: "JWT" }, claims, publicPem)],
    ["RS256 token of a foreign key pair", rs256],
    ["ES256 header", signed({ alg: "ES256", typ: "JWT" }, claims)],
    ["unknown kid", signed({ alg: "HS256", typ: "JWT", kid: "unknown-key" }, claims)],
    ["kid path traversal", signed({ alg: "HS256", typ: "JWT", kid: "../../../../dev/null" }, claims)],
    ["jku header pointing elsewhere", signed({ alg: "HS256", typ: "JWT", kid: "x", jku: "https://attacker.example/keys" }, claims)],
    ["expired", signed({ alg: "HS256", typ: "JWT" }, { ...claims, iat: now - 7200, nbf: now - 7200, exp: now - 3600 })],
    ["nbf in the future", signed({ alg: "HS256", typ: "JWT" }, { ...claims, nbf: now + 3600 })],
    ["wrong iss", signed({ alg: "HS256", typ: "JWT" }, { ...claims, iss: "someone-else" })],
    ["wrong aud", signed({ alg: "HS256", typ: "JWT" }, { ...claims, aud: "someone-else" })],
    ["aud as a list without ours", signed({ alg: "HS256", typ: "JWT" }, { ...claims, aud: ["a", "b"] })],
    ["no exp", signed({ alg: "HS256", typ: "JWT" }, { ...claims, exp: undefined })],
    ["no CompanyId", signed({ alg: "HS256", typ: "JWT" }, { ...claims, CompanyId: undefined })],
    ["CompanyId not a number", signed({ alg: "HS256", typ: "JWT" }, { ...claims, CompanyId: "1 OR 1=1" })],
    ["stripped signature", `${header}.${payload}.`],
    ["no signature part", `${header}.${payload}`],
    ["tampered CompanyId", `${header}.${tamperedPayload}.${signature}`],
    ["signature of another token", `${header}.${payload}.${other.token.split(".")[2]}`],
    ["wrong secret", forgeToken(claims, { secret: "not-our-secret-not-our-secret-not-our-secret" })],
    ["100 KB of junk", "a".repeat(100 * 1024)],
    ["100 KB validly signed token", signed({ alg: "HS256", typ: "JWT" }, { ...claims, padding: "p".repeat(100 * 1024) })],
    ["token of an unknown key id", signed({ alg: "HS256", typ: "JWT" }, { ...claims, sub: "ffffffffffffffff" })],
    ["token of a revoked key", revoked.token],
  ];
}

for (const backend of await availableBackends()) {
  describe(`JWT attack matrix on every protected route [${backend.name}]`, () => {
    let t: TestApp;
    let victim: Tenant;
    let other: Tenant;
    let revoked: Tenant;
    let operations: ApiOperation[];
    const ids: Record<string, number> = {};
    const originals: Partial<Record<FollowUpKind, number>> = {};
    before(async () => {
      t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      victim = await t.tenant(1401);
      other = await t.tenant(1402);
      revoked = await t.tenant(1403);
      await t.store.revokeApiKey(revoked.keyId);
      // An item with a webhook, decided by one bot pass: its delivery gives the routes that take a deliveryId a real one.
      const decided = validWorkItem({ customerReference: "VICTIM-DECIDED", webhookUrl: "http://127.0.0.1:9/hooks" });
      const withHook = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(victim.token), payload: decided });
      assert.equal(withHook.statusCode, 200, withHook.body);
      await runOneBotPass(t);
      const [delivery] = await t.query<{ delivery_id: number | string }>("SELECT delivery_id FROM webhook_outbox WHERE company_id = $1", [victim.companyId]);
      ids.deliveryId = Number(delivery!.delivery_id);
      const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(victim.token), payload: validWorkItem({ customerReference: "VICTIM-SECRET-REF" }) });
      Object.assign(ids, added.json<{ workItemId: number; workBatchId: number }>());
      // An original of its own for each kind of follow-up (a withdrawal cancels its original).
      for (const kind of FOLLOW_UP_KINDS) {
        const original = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(victim.token), payload: validWorkItem({ customerReference: `VICTIM-${kind}` }) });
        originals[kind] = original.json<{ workItemId: number }>().workItemId;
      }
      operations = (await apiOperations(t.app)).filter((operation) => operation.protected);
    });
    after(() => t.close());

    test("the route list is the published one", () => {
      assert.ok(operations.length >= 5, `protected operations: ${operations.map(describeOperation).join(", ")}`);
    });

    test("every attack gets 401 with WWW-Authenticate, a problem body, no data, nothing stored", async () => {
      const matrix = attacks(victim, revoked, other);
      let checked = 0;
      for (const operation of operations) {
        const url = fillPath(operation, ids);
        const followUp = followUpOf(operation.path);
        const body = operation.path.endsWith("AddWorkItemCreate")
          ? validWorkItem()
          : followUp === undefined
            ? exampleBody(operation)
            : { ...(FOLLOW_UP_BODIES[followUp] ?? (exampleBody(operation) as Record<string, unknown>)), originalWorkItemId: originals[followUp] };
        // The legitimate token gets through (so the refusals below are the token's doing).
        const legit = await t.app.inject({ method: operation.method, url, headers: { ...bearer(victim.token), "content-type": "application/json" }, ...(operation.jsonBody ? { payload: JSON.stringify(body) } : {}) });
        assert.ok(legit.statusCode < 400, `${describeOperation(operation)} with the real token: ${legit.statusCode} ${legit.body}`);
        const rowsBefore = await t.countRows();
        for (const [name, token] of matrix) {
          const response = await t.app.inject({
            method: operation.method,
            url,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": `attack-${checked}` },
            ...(operation.jsonBody ? { payload: JSON.stringify(body) } : {}),
          });
          const where = `${describeOperation(operation)} with ${name}`;
          assert.equal(response.statusCode, 401, `${where}: ${response.statusCode} ${response.body}`);
          assert.match(String(response.headers["www-authenticate"]), /^Bearer realm="work-item-api", error="invalid_token", error_description="[^"]+"$/, where);
          assert.match(String(response.headers["content-type"]), /^application\/problem\+json/, where);
          const problem = response.json<Record<string, unknown>>();
          assert.deepEqual(Object.keys(problem).sort(), ["detail", "instance", "status", "title", "traceId", "type"], where);
          assert.doesNotMatch(response.body, /VICTIM-SECRET-REF|RUNDVEEMEST|workBatchId|workItemId/, `${where}: no data`);
          checked++;
        }
        assert.deepEqual(await t.countRows(), rowsBefore, `${describeOperation(operation)}: nothing stored`);
      }
      assert.equal(checked, operations.length * matrix.length);
    });

    test("the same token text signed with our own kid still works, and a wrong role is 403", async () => {
      const claims = claimsFor(victim);
      const ours = signed({ alg: "HS256", typ: "JWT", kid: keyIdFor(TEST_JWT_SECRET) }, claims);
      assert.equal((await t.app.inject({ url: "/api/AuthorityRvdm/Ping", headers: bearer(ours) })).statusCode, 200);
      const wrongRole = signed({ alg: "HS256", typ: "JWT" }, { ...claims, role: "Admin" });
      assert.equal((await t.app.inject({ url: "/api/AuthorityRvdm/Ping", headers: bearer(wrongRole) })).statusCode, 403);
      const issued = JSON.parse(Buffer.from(victim.token.split(".")[0]!, "base64url").toString()) as { kid?: string; alg: string };
      assert.deepEqual(issued, { alg: "HS256", typ: "JWT", kid: keyIdFor(TEST_JWT_SECRET) });
    });
  });
}
