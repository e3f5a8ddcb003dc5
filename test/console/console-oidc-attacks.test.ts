/**
 * What must not sign anyone in through the identity provider (SPEC §19), against a real
 * provider (oidc-provider): a wrong state, a callback without the flow that started it, a
 * replayed code, an ID token for another audience, an expired one, a forged one, one from
 * another issuer; a provider that cannot be reached, and one that is not the configured issuer.
 * Each ends on the sign-in page with a message and a 4xx or 5xx other than 500, never a
 * redirect, and no session; and password sign-in goes on while the provider is down.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { ConsoleClient, setCookies } from "../helpers/console-session.ts";
import { skipWithoutChromium } from "../helpers/console-scene.ts";
import { providerAnswer, ROLE_VALUES, withOidcScene, type OidcScene } from "../helpers/oidc-scene.ts";
import { freePort } from "../helpers/processes.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

function refusedWith(response: LightMyRequestResponse, status: number, message: RegExp): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers.location, undefined, "no redirect: the page says what happened");
  assert.match(response.body, /<h1>Sign in<\/h1>/, "the sign-in page");
  assert.match(response.body, message);
  assert.ok(!setCookies(response).get("console_session"), "no session cookie");
  assert.equal(setCookies(response).get("console_oidc_flow"), "", "the flow cookie is cleared whatever the outcome");
}

const callback = (scene: OidcScene, answer: { callbackPath: string; flowCookie: string }, cookie = answer.flowCookie) =>
  scene.t.app.inject({ method: "GET", url: answer.callbackPath, headers: { cookie } });

const signIns = async (scene: OidcScene) => (await scene.t.store.listAudit({ limit: 50 })).filter((entry) => entry.action === "operator.signin").length;

const skip = skipWithoutChromium();

describe("console sign-in with an identity provider: what must not sign anyone in", { timeout: HANG_TIMEOUT_MS, skip }, () => {
  test("a wrong state, a missing flow, a replayed code, another audience, an expired or forged token, another issuer", () =>
    withOidcScene({}, async (scene) => {
      scene.provider.accounts.set("ann-7f3a", { email: "ann@example.com", roles: [ROLE_VALUES.admin] });

      const forgedState = await providerAnswer(scene, "ann-7f3a");
      refusedWith(await callback(scene, { ...forgedState, callbackPath: forgedState.callbackPath.replace(/state=[^&]+/, "state=forged") }), 400, /does not belong to the sign-in this browser started/);
      refusedWith(await callback(scene, forgedState, ""), 400, /No sign-in with Example SSO was started in this browser/);
      // The operator turned the provider down (or it refused them): its error, on the sign-in page.
      const declined = await providerAnswer(scene, "ann-7f3a");
      const params = new URLSearchParams(declined.callbackPath.split("?")[1]);
      const error = new URLSearchParams({ error: "access_denied", error_description: "<b>denied</b>", state: params.get("state")!, iss: params.get("iss")! });
      refusedWith(await callback(scene, { ...declined, callbackPath: `/console/oidc/callback?${error}` }), 401, /Example SSO did not sign you in \(access_denied\)/);
      const [name, value] = forgedState.flowCookie.split("=");
      refusedWith(await callback(scene, forgedState, `${name}=${value!.slice(0, -4)}AAAA`), 400, /No sign-in with Example SSO was started/);

      // The first use of a code signs in; the same code again is refused by the provider.
      const answer = await providerAnswer(scene, "ann-7f3a");
      const first = await callback(scene, answer);
      assert.equal(first.statusCode, 200, first.body);
      assert.ok(setCookies(first).get("console_session"));
      refusedWith(await callback(scene, answer), 400, /refused the sign-in code: it was used already or has expired \(invalid_grant\)/);

      const tampered: Array<[string, () => void, RegExp]> = [
        ["another audience", () => (scene.provider.rewriteIdToken = (claims) => ({ ...claims, aud: "another-client" })), /&quot;aud&quot; \(audience\)/],
        ["expired", () => (scene.provider.rewriteIdToken = (claims) => ({ ...claims, iat: claims.iat - 7200, exp: claims.iat - 3600 })), /&quot;exp&quot;/],
        ["another issuer", () => (scene.provider.rewriteIdToken = (claims) => ({ ...claims, iss: "http://evil.test" })), /&quot;iss&quot;/],
        ["another nonce", () => (scene.provider.rewriteIdToken = (claims) => ({ ...claims, nonce: "replayed-nonce" })), /&quot;nonce&quot;/],
        [
          "signed with a key that is not the provider's",
          () => {
            scene.provider.rewriteIdToken = (claims) => claims;
            scene.provider.signingKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
          },
          /signature/i,
        ],
      ];
      for (const [what, tamper, reason] of tampered) {
        tamper();
        const response = await callback(scene, await providerAnswer(scene, "ann-7f3a"));
        assert.equal(response.statusCode, 401, `${what}: ${response.statusCode}`);
        refusedWith(response, 401, /did not pass the console&#39;s checks, so you are not signed in/);
        assert.match(response.body, reason, what);
      }
      assert.equal(await signIns(scene), 1, "only the one good sign-in");

      // The failures are logged, and nothing secret with them: no client secret, code, token or flow.
      const log = scene.logLines.join("");
      assert.match(log, /console sign-in through the identity provider failed/);
      const code = new URLSearchParams(answer.callbackPath.split("?")[1]).get("code")!;
      for (const secret of [scene.clientSecret, code, answer.flowCookie.split("=")[1]!, "eyJ"]) assert.ok(!log.includes(secret), `the log holds no ${secret.slice(0, 6)}…`);
    }));

  test("a public client (no OIDC_CLIENT_SECRET) signs in with PKCE alone", () =>
    withOidcScene(
      {},
      async (scene) => {
        assert.equal(scene.t.config.oidc?.clientSecret, undefined);
        scene.provider.accounts.set("pat-1", { email: "pat@example.com", roles: [ROLE_VALUES.operator] });
        const signedIn = await callback(scene, await providerAnswer(scene, "pat-1"));
        assert.equal(signedIn.statusCode, 200, signedIn.body);
        assert.match(signedIn.body, /signed in as pat@example\.com \(operator\)/);
        assert.ok(setCookies(signedIn).get("console_session"));
      },
      { publicClient: true },
    ));

  test("an unreachable provider: a message, not a 500; password sign-in goes on", async () => {
    const closedPort = await freePort();
    await withOidcScene({ OIDC_ISSUER: `http://idp.test:${closedPort}` }, async (scene) => {
      const start = await scene.t.app.inject({ method: "GET", url: "/console/oidc/start" });
      refusedWithoutFlow(start, 503, /Example SSO cannot be reached right now.*or sign in with your e-mail and password/);
      const admin = await createOperatorAccount(scene.t.store, { email: "ops@example.com", role: "admin" });
      const client = new ConsoleClient(scene.t.app);
      const signedIn = await client.signIn(admin.email, admin.password);
      assert.equal(signedIn.statusCode, 303);
      assert.equal((await client.get("/console")).statusCode, 200);
      assert.deepEqual((await scene.t.store.listAudit({ limit: 5 })).map((entry) => [entry.action, entry.signIn]), [["operator.signin", { method: "password" }]]);
    });
  });

  test("a provider that is not the configured issuer: a message naming OIDC_ISSUER", () =>
    withOidcScene({}, async (scene) => {
      // The same provider under another name: its discovery document names idp.test, not this.
      const sameServerOtherName = `http://127.0.0.1:${scene.provider.port}`;
      await withOidcScene({ OIDC_ISSUER: sameServerOtherName }, async (other) => {
        const start = await other.t.app.inject({ method: "GET", url: "/console/oidc/start" });
        refusedWithoutFlow(start, 502, /did not answer as http:\/\/127\.0\.0\.1:\d+ .*OIDC_ISSUER/);
      });
    }));
});

function refusedWithoutFlow(response: LightMyRequestResponse, status: number, message: RegExp): void {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers.location, undefined);
  assert.match(response.body, message);
  assert.equal(setCookies(response).get("console_oidc_flow"), undefined, "no flow is started");
}
