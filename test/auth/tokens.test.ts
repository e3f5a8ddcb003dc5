import assert from "node:assert/strict";
import { test } from "node:test";
import { TokenRejectedError, TokenService } from "../../src/auth/tokens.ts";

const settings = { secret: "tokens-test-secret-tokens-test-secret-0123", issuer: "work-item-api", audience: "work-item-api", ttlSeconds: 60 };

test("a cached token is honoured only until its exp, then refused as expired", (t) => {
  t.mock.timers.enable({ apis: ["Date"], now: Date.parse("2026-11-21T14:00:00Z") });
  const tokens = new TokenService(settings);
  const { bearerToken, claims } = tokens.issue(7, "00112233aabbccdd");
  assert.equal(tokens.verify(bearerToken).CompanyId, "7");
  assert.equal(tokens.verify(bearerToken), tokens.verify(bearerToken), "the second verify is answered from the cache");
  t.mock.timers.setTime(claims.exp * 1000);
  assert.equal(tokens.verify(bearerToken).sub, "00112233aabbccdd", "still valid at exp itself");
  t.mock.timers.setTime(claims.exp * 1000 + 1);
  assert.throws(() => tokens.verify(bearerToken), (error: unknown) => error instanceof TokenRejectedError && /expired/.test(error.message));
});

test("a token that differs from a cached one in any byte is verified on its own", () => {
  const tokens = new TokenService(settings);
  const { bearerToken } = tokens.issue(7, "00112233aabbccdd");
  tokens.verify(bearerToken);
  const [header, payload, signature] = bearerToken.split(".");
  const forged = Buffer.from(payload!, "base64url").toString().replace('"CompanyId":"7"', '"CompanyId":"8"');
  assert.throws(() => tokens.verify(`${header}.${Buffer.from(forged).toString("base64url")}.${signature}`), TokenRejectedError);
  const at = bearerToken.lastIndexOf(".") + 5;
  const flipped = `${bearerToken.slice(0, at)}${bearerToken[at] === "A" ? "B" : "A"}${bearerToken.slice(at + 1)}`;
  assert.throws(() => tokens.verify(flipped), TokenRejectedError);
  const other = new TokenService({ ...settings, secret: "another-secret-another-secret-another-0123" });
  assert.throws(() => other.verify(bearerToken), TokenRejectedError);
});
