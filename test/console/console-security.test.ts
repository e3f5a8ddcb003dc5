/**
 * The console's defences (SPEC §12.1, §12.3) on both stores: escaping of integrator input, the
 * cross-site check, the CSRF token, roles, disabling, sign-in failures and their throttle, and
 * the session cookie's flags.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { createOperatorAccount, disableOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends, type Backend } from "../helpers/backends.ts";
import { ConsoleClient, setCookies, signedInClient } from "../helpers/console-session.ts";
import { metricValue } from "../helpers/prometheus.ts";
import { bearer, createTestApp, validWorkItem, type TestApp } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>`;

async function withConsole(backend: Backend, body: (t: TestApp, itemId: number) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const t = await createTestApp(backend, env);
  try {
    const tenant = await t.tenant(3);
    const added = await t.app.inject({
      method: "POST",
      url: "/api/AuthorityRvdm/AddWorkItemCreate",
      headers: bearer(tenant.token),
      payload: validWorkItem({ customerReference: HOSTILE, documentReference: `"'><b>bold</b>` }),
    });
    assert.equal(added.statusCode, 200, added.body);
    await body(t, added.json<{ workItemId: number }>().workItemId);
  } finally {
    await t.close();
  }
}

const operator = (t: TestApp, role: "viewer" | "operator" | "admin", email = `${role}@example.com`) => createOperatorAccount(t.store, { email, role });

for (const backend of await availableBackends()) {
  describe(`console security [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("integrator input renders as text on the list and the item page", () =>
      withConsole(backend, async (t, itemId) => {
        const admin = await operator(t, "admin");
        const client = await signedInClient(t.app, admin.email, admin.password);
        for (const url of ["/console/work-items", `/console/work-items/${itemId}`]) {
          const page = await client.get(url);
          assert.equal(page.statusCode, 200);
          assert.ok(!page.body.includes("<script>alert"), `${url} holds no live script tag`);
          assert.ok(!page.body.includes("<img src=x"), `${url} holds no live img tag`);
          assert.ok(!page.body.includes("<b>bold</b>"));
          assert.ok(page.body.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), `${url} shows the reference as text`);
          assert.match(String(page.headers["content-security-policy"]), /default-src 'self'/);
          assert.doesNotMatch(String(page.headers["content-security-policy"]), /unsafe-inline/);
        }
      }));

    test("every console page, its sign-in and error pages included, answers Cache-Control: no-store; the static assets may be cached", () =>
      withConsole(backend, async (t, itemId) => {
        const admin = await operator(t, "admin");
        const anonymous = new ConsoleClient(t.app);
        for (const url of ["/console/login", "/console", "/console/work-items", "/console/no-such-page"]) {
          const page = await anonymous.get(url);
          assert.equal(page.headers["cache-control"], "no-store", `${url} signed out: ${page.statusCode}`);
        }
        const client = await signedInClient(t.app, admin.email, admin.password);
        const pages = ["/console", "/console/overview/live", "/console/work-items", `/console/work-items/${itemId}`, "/console/webhook-deliveries", "/console/audit", "/console/work-items?companyId=x", "/console/work-items/999999"];
        for (const url of pages) {
          const page = await client.get(url);
          assert.ok(page.statusCode < 500, `${url}: ${page.statusCode}`);
          assert.equal(page.headers["cache-control"], "no-store", `${url}: ${page.statusCode}`);
        }
        const asset = await client.get("/console/assets/console.css");
        assert.equal(asset.statusCode, 200);
        assert.equal(asset.headers["cache-control"], "public, max-age=300");
      }));

    test("a cross-site POST is refused even with a valid session and token", () =>
      withConsole(backend, async (t, itemId) => {
        const admin = await operator(t, "admin");
        const client = await signedInClient(t.app, admin.email, admin.password);
        await client.get(`/console/work-items/${itemId}`);
        const cancel = `/console/work-items/${itemId}/cancel`;
        assert.equal((await client.post(cancel, { reason: "x" }, { origin: "http://localhost:9999" })).statusCode, 403, "another port of the same host");
        assert.equal((await client.post(cancel, { reason: "x" }, { "sec-fetch-site": "same-site" })).statusCode, 403, "same-site is not same-origin");
        assert.equal((await client.post(cancel, { reason: "x" }, { "sec-fetch-site": "cross-site" })).statusCode, 403);
        assert.equal((await client.get(`/console/work-items/${itemId}`)).body.includes("badge-new"), true, "the item is still New");
        const sameOrigin = await client.post(cancel, { reason: "the integrator asked" }, { origin: "http://localhost:80", "sec-fetch-site": "same-origin", host: "localhost:80" });
        assert.equal(sameOrigin.statusCode, 303, sameOrigin.body);
      }));

    test("a POST without or with a wrong CSRF token is refused", () =>
      withConsole(backend, async (t, itemId) => {
        const admin = await operator(t, "admin");
        const client = await signedInClient(t.app, admin.email, admin.password);
        await client.get(`/console/work-items/${itemId}`);
        const cancel = `/console/work-items/${itemId}/cancel`;
        const missing = await t.app.inject({
          method: "POST",
          url: cancel,
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: client.cookieHeader },
          payload: "reason=no+token",
        });
        assert.equal(missing.statusCode, 403);
        assert.match(missing.body, /<h1>Forbidden<\/h1>/, "a readable page");
        assert.equal((await client.post(cancel, { reason: "forged", _csrf: "not-the-token" })).statusCode, 403);
        const stranger = new ConsoleClient(t.app);
        await stranger.get("/console/login");
        const otherToken = stranger.csrfToken;
        assert.equal((await client.post(cancel, { reason: "someone else's token", _csrf: otherToken })).statusCode, 403, "a token of another CSRF secret");
        const planted = new ConsoleClient(t.app);
        await planted.get("/console/login");
        const anonymousToken = planted.csrfToken;
        const withVictimSession = await t.app.inject({
          method: "POST",
          url: cancel,
          headers: { "content-type": "application/x-www-form-urlencoded", cookie: `console_csrf=${planted.cookies.get("console_csrf")}; console_session=${client.cookies.get("console_session")}` },
          payload: new URLSearchParams({ _csrf: anonymousToken, reason: "planted cookie" }).toString(),
        });
        assert.equal(withVictimSession.statusCode, 403, "a planted CSRF cookie and its token are not bound to the victim's session");
        assert.equal((await client.post(cancel, { reason: "right token" })).statusCode, 303);
      }));

    test("a viewer sees no actions and gets 403 when posting anyway; a reason is required", () =>
      withConsole(backend, async (t, itemId) => {
        const viewer = await operator(t, "viewer");
        const client = await signedInClient(t.app, viewer.email, viewer.password);
        const page = await client.get(`/console/work-items/${itemId}`);
        assert.ok(!page.body.includes("/cancel"), "no cancel form for a viewer");
        assert.equal((await client.post(`/console/work-items/${itemId}/retry`, { reason: "I want to" })).statusCode, 403);
        assert.equal((await client.post(`/console/work-items/${itemId}/cancel`, { reason: "I want to" })).statusCode, 403);
        assert.equal((await client.post("/console/bot/pause", { workType: "AuthorityRvdm", reason: "I want to" })).statusCode, 403);
        assert.equal((await client.get("/console/audit")).statusCode, 200, "a viewer reads the audit log");

        const admin = await operator(t, "admin");
        const actor = await signedInClient(t.app, admin.email, admin.password);
        await actor.get(`/console/work-items/${itemId}`);
        assert.equal((await actor.post(`/console/work-items/${itemId}/cancel`, { reason: "  " })).statusCode, 400);
        assert.equal((await actor.post(`/console/work-items/${itemId}/retry`, { reason: "not failed" })).statusCode, 409, "retry of a New item");
        assert.equal((await actor.get("/console/work-items/999999")).statusCode, 404);
        assert.equal((await actor.get("/console/work-items/abc")).statusCode, 404);
        assert.equal((await actor.get("/console/work-items?cursor=-1")).statusCode, 400);
      }));

    test("a disabled operator's session stops working within 5 seconds", () =>
      withConsole(backend, async (t) => {
        const admin = await operator(t, "operator");
        const client = await signedInClient(t.app, admin.email, admin.password);
        assert.equal((await client.get("/console")).statusCode, 200);
        await disableOperatorAccount(t.store, admin.email);
        const disabledAt = Date.now();
        let answer = await client.get("/console");
        while (answer.statusCode === 200 && Date.now() - disabledAt < 6_000) {
          await sleep(200);
          answer = await client.get("/console");
        }
        assert.equal(answer.statusCode, 303);
        assert.equal(answer.headers.location, "/console/login");
        assert.ok(Date.now() - disabledAt < 5_000, `refused after ${Date.now() - disabledAt} ms`);
      }));

    test("sign-in: a wrong password gives 401 and no session; the session cookie is HttpOnly and SameSite=Strict; sign-out ends it", () =>
      withConsole(backend, async (t) => {
        const admin = await operator(t, "admin");
        const wrong = await new ConsoleClient(t.app).signIn(admin.email, "not-the-password-at-all");
        assert.equal(wrong.statusCode, 401);
        assert.ok(!setCookies(wrong).has("console_session"), "no session cookie");
        assert.match(wrong.body, /do not match/);

        const client = new ConsoleClient(t.app);
        const right = await client.signIn(admin.email.toUpperCase(), admin.password);
        assert.equal(right.statusCode, 303);
        const header = [right.headers["set-cookie"]].flat().find((line) => String(line).startsWith("console_session="));
        assert.ok(header, "a session cookie");
        assert.match(header, /; HttpOnly/);
        assert.match(header, /; SameSite=Strict/);
        assert.match(header, /; Path=\/console/);
        assert.doesNotMatch(header, /; Secure/, "plain http here");

        await client.get("/console");
        const out = await client.post("/console/logout", {});
        assert.equal(out.statusCode, 303);
        assert.equal(out.headers.location, "/console/login");
        for (const url of ["/console", "/console/overview/live", "/console/work-items", "/console/work-items/1", "/console/webhook-deliveries", "/console/audit"]) {
          const answer = await client.get(url);
          assert.equal(answer.statusCode, 303, `${url} after sign-out`);
          assert.equal(answer.headers.location, "/console/login");
        }
      }));

    test("the session cookie is Secure when the request came over https", () =>
      withConsole(
        backend,
        async (t) => {
          const admin = await operator(t, "admin");
          const client = new ConsoleClient(t.app);
          await client.get("/console/login");
          const right = await client.post("/console/login", { email: admin.email, password: admin.password }, { "x-forwarded-proto": "https", host: "console.example", origin: "https://console.example" });
          assert.equal(right.statusCode, 303, right.body);
          const header = [right.headers["set-cookie"]].flat().find((line) => String(line).startsWith("console_session="));
          assert.match(String(header), /; Secure/);
        },
        { TRUST_PROXY: "127.0.0.1" },
      ));

    test("the 11th failed sign-in for one e-mail in a minute is 429, while another operator still signs in", () =>
      withConsole(backend, async (t) => {
        const target = await operator(t, "admin", "target@example.com");
        const other = await operator(t, "operator", "other@example.com");
        const guesser = new ConsoleClient(t.app);
        for (let failure = 1; failure <= 10; failure++) {
          assert.equal((await guesser.signIn(target.email, `guess-${failure}-xxxxxxxxxx`)).statusCode, 401, `failure ${failure}`);
        }
        const limited = await guesser.signIn(target.email, "guess-11-xxxxxxxxxx");
        assert.equal(limited.statusCode, 429);
        assert.match(limited.body, /Too many failed sign-ins/);
        assert.ok(Number(limited.headers["retry-after"]) >= 1);
        assert.ok(!setCookies(limited).has("console_session"));
        assert.equal((await new ConsoleClient(t.app).signIn(other.email, other.password)).statusCode, 303, "another operator's right password from the same address");
      }));

    test("a sign-in flood from one address hashes at most twice the limit of passwords, then refuses before hashing (SPEC §20)", () =>
      withConsole(backend, async (t) => {
        const target = await operator(t, "admin", "flooded@example.com");
        const checked = async () => {
          const text = (await t.app.inject({ url: "/metrics" })).body;
          return metricValue(text, "work_item_api_sign_in_attempts_total", { surface: "console", outcome: "failed" });
        };
        const flooder = new ConsoleClient(t.app);
        const statuses = new Map<number, number>();
        const tally = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
        for (let i = 0; i < 60; i++) tally((await flooder.signIn(target.email, `flood-${i}-xxxxxxxxxx`)).statusCode);
        for (let i = 0; i < 60; i++) tally((await flooder.signIn(`nobody-${i}@example.com`, `flood-${i}-xxxxxxxxxx`)).statusCode);
        assert.deepEqual(Object.fromEntries(statuses), { 401: 10, 429: 110 });
        assert.equal(await checked(), 20, "ten on the target, ten more on fresh e-mails, then no password was hashed");
        const refused = await flooder.signIn(`nobody-x@example.com`, "flood-x-xxxxxxxxxx");
        assert.equal(refused.statusCode, 429);
        assert.match(refused.body, /Too many failed sign-ins/);
      }));
  });
}
