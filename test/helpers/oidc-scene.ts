/**
 * The console and a real identity provider on two sites, for the sign-in tests of SPEC §19: the
 * console at http://console.test:<port>, the provider at http://idp.test:<port>, both on
 * loopback. Chromium resolves the two names through --host-resolver-rules and the app through
 * its own fetch, so every hop between them is a real cross-site navigation, where a browser
 * keeps SameSite=Strict cookies to itself.
 */
import assert from "node:assert/strict";
import { chromium, type Browser, type Page } from "playwright-core";
import { createLogger } from "../../src/logger.ts";
import { sqliteBackend } from "./backends.ts";
import { CHROMIUM_PATH, DESKTOP } from "./console-scene.ts";
import { loopbackTestNamesFetch, startIdentityProvider, type TestIdentityProvider } from "./identity-provider.ts";
import { freePort } from "./processes.ts";
import { setCookies } from "./console-session.ts";
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
  /** The app's log, at level info, one JSON line each. */
  logLines: string[];
  /** The console's client secret at the provider. */
  clientSecret: string;
  /** A page of a new browser context (its own cookies). */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
}

/** The console's OIDC settings for this provider; `env` adds or overrides. A confidential client unless `publicClient`. */
export async function withOidcScene(env: Record<string, string>, body: (scene: OidcScene) => Promise<void>, options: { publicClient?: boolean } = {}): Promise<void> {
  const port = await freePort();
  const consoleUrl = `http://console.test:${port}`;
  // A public client has no secret: PKCE alone proves the code is its own.
  const clientSecret = options.publicClient ? "" : "console-client-secret-0123456789";
  const logLines: string[] = [];
  const logger = createLogger({ logLevel: "info" }, { write: (line: string) => logLines.push(line) });
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
      { identityProviderFetch: loopbackTestNamesFetch, logger },
    );
    try {
      await t.app.listen({ host: "127.0.0.1", port });
      // Everything else fails at once: the browser has no internet to wait for.
      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--host-resolver-rules=MAP idp.test 127.0.0.1, MAP console.test 127.0.0.1, MAP * ~NOTFOUND"] });
      try {
        const newPage = async (viewport = DESKTOP) => (await browser.newContext({ viewport })).newPage();
        await body({ t, provider, consoleUrl, browser, logLines, clientSecret, newPage });
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
 * A sign-in with the provider up to its answer, in plain HTTP: the console's start (its flow
 * cookie and the way to the provider), the provider's development sign-in form as `subject`,
 * and the redirect back, which is not followed. What the browser would have sent to the
 * callback comes back, for a test to send as it likes.
 */
export async function providerAnswer(scene: OidcScene, subject: string): Promise<{ callbackPath: string; flowCookie: string }> {
  const start = await scene.t.app.inject({ method: "GET", url: "/console/oidc/start" });
  assert.equal(start.statusCode, 303, start.body);
  const flowCookie = `console_oidc_flow=${setCookies(start).get("console_oidc_flow")}`;
  const jar = new Map<string, string>();
  let request: { url: string; method: string; body?: string } = { url: String(start.headers.location), method: "GET" };
  for (let hop = 0; hop < 10; hop++) {
    const response = await loopbackTestNamesFetch(request.url, {
      method: request.method,
      body: request.body ?? null,
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join("; "), ...(request.body ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      redirect: "manual",
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair!.indexOf("=");
      jar.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = response.headers.get("location");
    if (location) {
      const next = new URL(location, request.url);
      if (next.origin === scene.consoleUrl) return { callbackPath: `${next.pathname}${next.search}`, flowCookie };
      request = { url: next.href, method: "GET" };
      continue;
    }
    const page = await response.text();
    const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(page)?.[1];
    assert.ok(action && page.includes('name="login"'), `the provider's sign-in form (${response.status}): ${page.slice(0, 300)}`);
    request = { url: new URL(action, request.url).href, method: "POST", body: new URLSearchParams({ prompt: "login", login: subject, password: "any" }).toString() };
  }
  assert.fail("the provider did not send the browser back within 10 steps");
}
