/**
 * Console sign-in with the company's identity provider (SPEC §19), in a real Chromium against a
 * real OpenID provider (oidc-provider) on another site: admin, operator, viewer and no-role
 * users; a role changed at the provider taking effect at the next sign-in; sign-out ending the
 * provider's session too; the audit entries; the sign-in page accessible and fitting a phone.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { fitsViewportWidth, PHONE, seriousAxeViolations, skipWithoutChromium } from "../helpers/console-scene.ts";
import { PROVIDER_NAME, ROLE_VALUES, signInWithProvider, withOidcScene } from "../helpers/oidc-scene.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const skip = skipWithoutChromium();

const shots = mkdtempSync(join(tmpdir(), "console-oidc-shots-"));

async function accessible(page: Page, name: string): Promise<void> {
  assert.deepEqual(
    (await seriousAxeViolations(page)).map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(" ")).join(", ")})`),
    [],
    `${name}: no serious or critical accessibility violations`,
  );
  assert.ok(await fitsViewportWidth(page), `${name}: no sideways scrolling`);
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** The role the signed-in console shows in its header. */
const shownRole = async (page: Page) => /\((viewer|operator|admin)\)/.exec(await page.locator(".who span").innerText())?.[1];

describe("console sign-in with an identity provider, in Chromium, across two sites", { timeout: HANG_TIMEOUT_MS, skip }, () => {
  test("admin and viewer sign in through the provider and land signed in; roles follow the claim at each sign-in; sign-out ends both sessions; all audited", () =>
    withOidcScene({}, async (scene) => {
      scene.provider.accounts.set("ann-7f3a", { email: "Ann@Example.com", roles: [ROLE_VALUES.admin, "unrelated"] });
      scene.provider.accounts.set("vic-19c2", { email: "vic@example.com", roles: [ROLE_VALUES.viewer] });

      const phone = await scene.newPage(PHONE);
      await phone.goto(`${scene.consoleUrl}/console/login`);
      assert.ok(await phone.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).isVisible());
      assert.ok(await phone.getByLabel("E-mail").isVisible(), "password sign-in stays beside it by default");
      await accessible(phone, "sign-in-phone");

      const page = await scene.newPage();
      await page.goto(`${scene.consoleUrl}/console`);
      assert.match(page.url(), /\/console\/login$/, "signed out, the console sends you to sign in");
      await signInWithProvider(scene, page, "ann-7f3a");
      assert.equal(page.url(), `${scene.consoleUrl}/console`, "back from the other site, signed in: the Strict session cookie went with the page's own navigation");
      assert.equal(await shownRole(page), "admin");
      assert.match(await page.locator(".who span").innerText(), /ann@example\.com/);
      assert.ok(await page.getByRole("heading", { name: "Companies" }).isVisible());
      const cookies = await page.context().cookies(`${scene.consoleUrl}/console/oidc/callback`);
      assert.equal(cookies.find((cookie) => cookie.name === "console_session")?.sameSite, "Strict");
      assert.equal(cookies.find((cookie) => cookie.name === "console_oidc_flow"), undefined, "the flow cookie is gone after use");

      // The trap is real here: a navigation that starts on the provider's site arrives without
      // the Strict session cookie, so a redirect from the callback would have looked signed out.
      await page.goto(`${scene.provider.issuer}/.well-known/openid-configuration`);
      await page.evaluate((url) => ((globalThis as unknown as { location: { href: string } }).location.href = url), `${scene.consoleUrl}/console`);
      await page.waitForURL(/\/console\/login$/, { timeout: HANG_TIMEOUT_MS });
      await page.goto(`${scene.consoleUrl}/console`);
      assert.equal(page.url(), `${scene.consoleUrl}/console`, "typed in, the same cookie goes along: still signed in");

      // The role comes from the claim at every sign-in: demoted at the provider, a viewer next time.
      scene.provider.accounts.get("ann-7f3a")!.roles = [ROLE_VALUES.viewer];
      const later = await page.context().newPage();
      await signInWithProvider(scene, later, "ann-7f3a");
      assert.equal(await shownRole(later), "viewer", "the provider's session signs her straight in, with the new role");
      await later.close();

      const viewer = await scene.newPage(PHONE);
      await signInWithProvider(scene, viewer, "vic-19c2");
      assert.equal(await shownRole(viewer), "viewer");
      await accessible(viewer, "overview-phone-viewer");

      // Sign-out ends the console session, then the provider's (RP-initiated logout), and comes back.
      await page.reload();
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL((url) => url.hostname === "idp.test", { timeout: HANG_TIMEOUT_MS });
      await page.getByRole("button", { name: "Yes, sign me out" }).click();
      await page.waitForURL(`${scene.consoleUrl}/console/login`, { timeout: HANG_TIMEOUT_MS });
      assert.ok(scene.provider.requests.some((path) => path.startsWith("/session/end")), "the provider's end_session_endpoint was visited");
      await page.goto(`${scene.consoleUrl}/console`);
      assert.match(page.url(), /\/console\/login$/, "the console session is over");
      await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).click();
      await page.waitForURL((url) => url.hostname === "idp.test", { timeout: HANG_TIMEOUT_MS });
      assert.equal(await page.locator('input[name="login"]').count(), 1, "the provider's session is over too: it asks who you are again");

      const operators = await scene.t.store.listOperators();
      assert.deepEqual(operators.map((o) => [o.email, o.role, o.signInMethod]), [["ann@example.com", "viewer", "oidc"], ["vic@example.com", "viewer", "oidc"]]);
      const audit = await scene.t.store.listAudit({ limit: 10 });
      assert.deepEqual(
        audit.map((entry) => [entry.action, entry.operator.email, entry.signIn]).reverse(),
        [
          ["operator.signin", "ann@example.com", { method: "oidc", issuer: scene.provider.issuer, subject: "ann-7f3a" }],
          ["operator.signin", "ann@example.com", { method: "oidc", issuer: scene.provider.issuer, subject: "ann-7f3a" }],
          ["operator.signin", "vic@example.com", { method: "oidc", issuer: scene.provider.issuer, subject: "vic-19c2" }],
        ],
      );
      process.stderr.write(`console OIDC screenshots: ${shots}\n`);
    }));

  test("a user whose claim maps to no role gets a 403 page that says so, and no session", () =>
    withOidcScene({}, async (scene) => {
      scene.provider.accounts.set("nobody-1", { email: "nobody@example.com", roles: ["payroll"] });
      const page = await scene.newPage(PHONE);
      let status = 0;
      page.on("response", (response) => {
        if (new URL(response.url()).pathname === "/console/oidc/callback") status = response.status();
      });
      await signInWithProvider(scene, page, "nobody-1");
      assert.equal(status, 403);
      assert.match(new URL(page.url()).pathname, /^\/console\/oidc\/callback$/, "no redirect: the page says why");
      assert.ok(await page.getByRole("heading", { name: "No access to the console" }).isVisible());
      assert.match(await page.locator("main").innerText(), /no role this console knows/);
      await accessible(page, "no-access-phone");
      assert.equal((await page.context().cookies(`${scene.consoleUrl}/console`)).find((cookie) => cookie.name === "console_session"), undefined);
      await page.goto(`${scene.consoleUrl}/console`);
      assert.match(page.url(), /\/console\/login$/);
      assert.deepEqual(await scene.t.store.listOperators(), [], "no operator is made for someone without a role");
    }));

  test("password sign-in switched off: the page offers only the provider, and a password form post is refused", () =>
    withOidcScene({ CONSOLE_PASSWORD_SIGNIN: "false" }, async (scene) => {
      const admin = await createOperatorAccount(scene.t.store, { email: "ops@example.com", role: "admin" });
      const page = await scene.newPage();
      await page.goto(`${scene.consoleUrl}/console/login`);
      assert.ok(await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).isVisible());
      assert.equal(await page.getByLabel("Password").count(), 0, "no password field");
      await accessible(page, "sign-in-provider-only");
      const phone = await scene.newPage(PHONE);
      const refusal = await phone.goto(`${scene.consoleUrl}/console/oidc/callback?code=made-up&state=made-up`);
      assert.equal(refusal?.status(), 400);
      assert.match(await phone.getByRole("alert").innerText(), /No sign-in with Example SSO was started in this browser/);
      await accessible(phone, "sign-in-refused-phone");
      const refused = await scene.t.app.inject({
        method: "POST",
        url: "/console/login",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({ email: admin.email, password: admin.password }).toString(),
      });
      assert.ok(refused.statusCode === 403, `${refused.statusCode}`);
      assert.equal(String(refused.headers["set-cookie"] ?? "").includes("console_session="), false);
    }));
});
