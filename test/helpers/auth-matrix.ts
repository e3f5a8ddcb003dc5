/**
 * The one auth and tenancy check every protected route's test calls: a missing, malformed,
 * expired, tampered, wrongly signed, `alg: none` and wrong-role token are refused exactly as
 * SPEC §2 says, and a valid token of another company sees a 404 like a missing id.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import type { InjectOptions } from "fastify";
import { TEST_JWT_SECRET, bearer, problem, type TestApp, type Tenant } from "./test-app.ts";

export interface ProtectedRoute {
  method: InjectOptions["method"];
  url: string;
  payload?: unknown;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export function forgeToken(claims: Record<string, unknown>, options: { secret?: string; alg?: string } = {}): string {
  const header = b64({ alg: options.alg ?? "HS256", typ: "JWT" });
  const payload = b64(claims);
  if (options.alg === "none") return `${header}.${payload}.`;
  const signature = createHmac("sha256", options.secret ?? TEST_JWT_SECRET).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

export function claimsFor(tenant: Tenant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    CompanyId: String(tenant.companyId),
    role: "ApiKey",
    sub: tenant.keyId,
    jti: "test",
    iat: now,
    nbf: now,
    exp: now + 600,
    iss: "work-item-api",
    aud: "work-item-api",
    ...overrides,
  };
}

/** Asserts the route refuses every bad token with the right status and WWW-Authenticate. */
export async function assertRouteIsGuarded(t: TestApp, tenant: Tenant, route: ProtectedRoute): Promise<void> {
  const call = (headers: Record<string, string>) =>
    t.app.inject({ method: route.method, url: route.url, headers: { "content-type": "application/json", ...headers }, ...(route.payload === undefined ? {} : { payload: JSON.stringify(route.payload) }) });

  const missing = await call({});
  assert.equal(missing.statusCode, 401, `${route.url}: missing token`);
  assert.equal(missing.headers["www-authenticate"], 'Bearer realm="work-item-api"');
  assert.match(String(missing.headers["content-type"]), /^application\/problem\+json/);

  const [header, payload] = tenant.token.split(".");
  const tampered = `${header}.${b64({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), CompanyId: "999999" })}.${tenant.token.split(".")[2]}`;
  const cases: Array<[string, string]> = [
    ["malformed header", "Basic abc"],
    ["garbage token", "Bearer not-a-token"],
    ["expired", `Bearer ${forgeToken(claimsFor(tenant, { iat: 1000, nbf: 1000, exp: 2000 }))}`],
    ["not yet valid", `Bearer ${forgeToken(claimsFor(tenant, { nbf: Math.floor(Date.now() / 1000) + 3600 }))}`],
    ["tampered CompanyId", `Bearer ${tampered}`],
    ["wrong key", `Bearer ${forgeToken(claimsFor(tenant), { secret: "another-secret-another-secret-0123456789" })}`],
    ["alg none", `Bearer ${forgeToken(claimsFor(tenant), { alg: "none" })}`],
    ["wrong issuer", `Bearer ${forgeToken(claimsFor(tenant, { iss: "someone-else" }))}`],
    ["wrong audience", `Bearer ${forgeToken(claimsFor(tenant, { aud: "someone-else" }))}`],
  ];
  for (const [name, authorization] of cases) {
    const response = await call({ authorization });
    assert.equal(response.statusCode, 401, `${route.method} ${route.url}: ${name} gives 401, got ${response.statusCode} ${response.body}`);
    assert.match(String(response.headers["www-authenticate"]), /^Bearer realm="work-item-api", error="invalid_token", error_description="[^"]+"$/, name);
    assert.equal(problem(response).status, 401);
  }

  for (const [name, role] of [["another role", "User"], ["no role claim", undefined]] as const) {
    const wrongRole = await call({ authorization: `Bearer ${forgeToken(claimsFor(tenant, { role }))}` });
    assert.equal(wrongRole.statusCode, 403, `${route.url}: token with ${name}`);
    assert.equal(problem(wrongRole).status, 403);
    assert.equal(wrongRole.headers["www-authenticate"], undefined, `${route.url}: a 403 asks for no other token`);
  }
}

/** A valid token of `other` must see the same 404 for `owner`'s id as for a missing id. */
export async function assertForeignIdIsNotFound(t: TestApp, other: Tenant, route: ProtectedRoute, missingUrl: string): Promise<void> {
  const foreign = await t.app.inject({ method: route.method, url: route.url, headers: bearer(other.token) });
  const missing = await t.app.inject({ method: route.method, url: missingUrl, headers: bearer(other.token) });
  assert.equal(foreign.statusCode, 404, `${route.url} with another company's token`);
  assert.equal(missing.statusCode, 404);
  const strip = (body: ReturnType<typeof problem>) => ({ ...body, traceId: "", instance: "", detail: body.detail.replace(/\d+/g, "N") });
  assert.deepEqual(strip(problem(foreign)), strip(problem(missing)));
}
