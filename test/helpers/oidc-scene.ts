/**
 * The console and a real identity provider on two sites, for the sign-in tests of SPEC §19: the
 * console at http://console.test:<port>, the provider at http://idp.test:<port>, both on
 * loopback. Chromium resolves the two names through --host-resolver-rules and the app through
 * its own fetch, so every hop between them is a real cross-site navigation, where a browser
 * keeps SameSite=Strict cookies to itself.
 */
import assert from "node:assert/strict";
import { chromium, type Browser, type Page } from "playwright-core";
import { sqliteBackend } from "./backends.ts";
import { CHROMIUM_PATH, DESKTOP } from "./console-scene.ts";
import { loopbackTestNamesFetch, startIdentityProvider, type TestIdentityProvider } from "./identity-provider.ts";
import { freePort } from "./processes.ts";
import { createTestApp, type TestApp } from "./test-app.ts";
import { HANG_TIMEOUT_MS } from "./waiting.ts";

export const PROVIDER_NAME = "Example SSO";
export const CLIENT_ID = "work-item-console";
export const ROLE_VALUES = { admin: "console-admin", operator: "console-operator", viewer: "console-viewer" } as const;

export interface OidcScene {
  t: TestApp;
  provider: TestIdentityProvider;
  /** http://console.test:<port> */
  consoleUrl: string;
  browser: Browser;
  /** A page of a new browser context (its own cookies). */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
}

/** The console's OIDC settings for this provider; `env` adds or overrides. */
export async function withOidcScene(env: Record<string, string>, body: (scene: OidcScene) => Promise<void>): Promise<void> {
  const port = await freePort();
  const consoleUrl = `http://console.test:${port}`;
  const clientSecret = "console-client-secret-0123456789";
  const provider = await startIdentityProvider({ clientId: CLIENT_ID, clientSecret, redirectUri: `${consoleUrl}/console/oidc/callback`, postLogoutRedirectUri: `${consoleUrl}/console/login` });
  try {
    const t = await createTestApp(
      sqliteBackend,
      {
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: CLIENT_ID,
        OIDC_CLIENT_SECRET: clientSecret,
        OIDC_REDIRECT_URL: `${consoleUrl}/console/oidc/callback`,
        OIDC_ADMIN_VALUES: ROLE_VALUES.admin,
        OIDC_OPERATOR_VALUES: ROLE_VALUES.operator,
        OIDC_VIEWER_VALUES: ROLE_VALUES.viewer,
        OIDC_DISPLAY_NAME: PROVIDER_NAME,
        ...env,
      },
      { identityProviderFetch: loopbackTestNamesFetch },
    );
    try {
      await t.app.listen({ host: "127.0.0.1", port });
      // Everything else fails at once: the browser has no internet to wait for.
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--host-resolver-rules=MAP idp.test 127.0.0.1, MAP console.test 127.0.0.1, MAP * ~NOTFOUND"] });
      try {
        const newPage = async (viewport = DESKTOP) => (await browser.newContext({ viewport })).newPage();
        await body({ t, provider, consoleUrl, browser, newPage });
      } finally {
        await browser.close();
      }
    } finally {
      await t.close();
    }
  } finally {
    await provider.close();
  }
}

/**
 * From the console's sign-in page through the provider's form as `subject` (the form is skipped
 * while the provider's own session lasts) and back: resolves once the browser has come back to
 * the console, wherever it landed.
 */
export async function signInWithProvider(scene: OidcScene, page: Page, subject: string): Promise<void> {
  await page.goto(`${scene.consoleUrl}/console/login`);
  // Signed in already, the sign-in page sends you on to the console: start the flow directly.
  if (new URL(page.url()).pathname === "/console/login") await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  else await page.goto(`${scene.consoleUrl}/console/oidc/start`);
  await page.waitForURL((url) => url.hostname === "idp.test" || url.hostname === "console.test", { timeout: HANG_TIMEOUT_MS });
  if (new URL(page.url()).hostname === "idp.test") {
    await page.locator('input[name="login"]').fill(subject);
    await page.locator('input[name="password"]').fill("any password will do");
    await page.getByRole("button", { name: "Sign-in" }).click();
  }
  await page.waitForURL((url) => url.hostname === "console.test", { timeout: HANG_TIMEOUT_MS });
  // The callback's page moves on by itself after a sign-in; a refusal stays there to be read.
  if ((await page.locator("h1").first().textContent()) === "Signed in") {
    await page.waitForURL((url) => url.pathname !== "/console/oidc/callback", { timeout: HANG_TIMEOUT_MS });
  }
}

/**
 * Runs a sign-in in the browser up to the provider's answer and stops it there: the callback URL
 * (code and state) and the flow cookie it would have carried, for a test to send as it likes.
 */
export async function interceptedCallback(scene: OidcScene, page: Page, subject: string): Promise<{ callbackPath: string; flowCookie: string }> {
  let callbackUrl: string | undefined;
  await page.route("**/console/oidc/callback*", async (route) => {
    callbackUrl = route.request().url();
    await route.abort();
  });
  await page.goto(`${scene.consoleUrl}/console/login`);
  await page.getByRole("link", { name: `Sign in with ${PROVIDER_NAME}` }).click();
  await page.waitForURL((url) => url.hostname === "idp.test", { timeout: HANG_TIMEOUT_MS });
  if (await page.locator('input[name="login"]').count()) {
    await page.locator('input[name="login"]').fill(subject);
    await page.locator('input[name="password"]').fill("any password will do");
    await page.getByRole("button", { name: "Sign-in" }).click().catch(() => undefined);
  }
  const deadline = Date.now() + HANG_TIMEOUT_MS;
  while (!callbackUrl && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(callbackUrl, "the provider sent the browser back to the callback");
  await page.unroute("**/console/oidc/callback*");
  const cookies = await page.context().cookies(callbackUrl);
  const flow = cookies.find((cookie) => cookie.name === "console_oidc_flow");
  assert.ok(flow, "the flow cookie is sent to the callback");
  const url = new URL(callbackUrl);
  return { callbackPath: `${url.pathname}${url.search}`, flowCookie: `${flow.name}=${flow.value}` };
}
