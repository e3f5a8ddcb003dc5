/**
 * Log redaction: the logs of a full run of the real process at LOG_LEVEL=trace — logins right
 * and wrong, adds, every kind of error, and webhook deliveries where the dispatcher exists —
 * contain no API secret, no bearer token, no whsec_ secret and no signing key.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { openStore } from "../../src/store/open-store.ts";
import { newWebhookSecret } from "../../src/webhooks/secrets.ts";
import { claimsFor, forgeToken } from "../helpers/auth-matrix.ts";
import { queryRows, sqliteBackend } from "../helpers/backends.ts";
import { startServer } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

const COMPANY = 1301;
async function webhookReceiver(): Promise<{ server: Server; url: string; deliveries: string[] }> {
  const deliveries: string[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      deliveries.push(body);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, deliveries };
}

describe("log redaction", () => {
  test("a full run at LOG_LEVEL=trace logs no secret, token or signing key", { timeout: HANG_TIMEOUT_MS }, async () => {
    const created = await sqliteBackend.create();
    const setup = await openStore(created.location);
    const key = await createKey(setup, { companyId: COMPANY });
    const whsec = newWebhookSecret();
    // Stored as it was before encryption at rest: the server encrypts it at start and signs with it.
    await setup.ensureWebhookSecret(COMPANY, whsec);
    await setup.close();
    const receiver = await webhookReceiver();
    const server = await startServer({
      DATABASE_URL: created.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: "trace",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      BOT_SCHEDULE: "* * * * * *",
    });
    const tokens: string[] = [];
    const wrongSecret = `wis_${"W".repeat(43)}`;
    let dataKey = "";
    try {
      const call = (path: string, init: RequestInit = {}) => fetch(`${server.baseUrl}${path}`, init);
      const json = (body: unknown, token?: string): RequestInit => ({
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });

      const login = await call("/api/Login/Authenticate", json({ apiKey: key.apiKey, secret: key.secret }));
      assert.equal(login.status, 200);
      const { bearerToken } = (await login.json()) as { bearerToken: string };
      tokens.push(bearerToken);
      assert.equal((await call("/api/Login/Authenticate", json({ apiKey: key.apiKey, secret: wrongSecret }))).status, 401);
      assert.equal((await call("/api/Login/Authenticate", json({ apiKey: key.apiKey, secret: key.secret, extra: key.secret }))).status, 400);
      assert.equal((await call("/api/Login/Authenticate", json({ apiKey: key.secret, secret: 42 }))).status, 400);
      assert.equal((await call("/api/Login/Authenticate", { method: "POST", headers: { "content-type": "application/json" }, body: `{"apiKey":"${key.apiKey}","secret":"${key.secret}"` })).status, 400);

      const ids: number[] = [];
      for (let i = 0; i < 3; i++) {
        const added = await call("/api/AuthorityRvdm/AddWorkItemCreate", json(validWorkItem({ customerReference: `LOG-${i}`, webhookUrl: receiver.url }), bearerToken));
        assert.equal(added.status, 200);
        ids.push(((await added.json()) as { workItemId: number }).workItemId);
      }
      const forged = forgeToken(claimsFor({ ...key, token: "" }), { secret: "x".repeat(40) });
      const expired = forgeToken(claimsFor({ ...key, token: "" }, { iat: 1000, nbf: 1000, exp: 2000 }));
      tokens.push(forged, expired);
      const errors: Array<[string, RequestInit, number]> = [
        ["/api/AuthorityRvdm/AddWorkItemCreate", json({ customerReference: key.secret }, bearerToken), 400],
        ["/api/AuthorityRvdm/AddWorkItemCreate", { ...json(validWorkItem(), bearerToken), headers: { "content-type": "text/plain", authorization: `Bearer ${bearerToken}` } }, 415],
        ["/api/AuthorityRvdm/AddWorkItemCreate", json({ blob: "x".repeat(70_000) }, bearerToken), 413],
        ["/api/AuthorityRvdm/WorkItem/999999", { headers: { authorization: `Bearer ${bearerToken}` } }, 404],
        ["/api/AuthorityRvdm/WorkItem/abc", { headers: { authorization: `Bearer ${bearerToken}` } }, 400],
        ["/api/AuthorityRvdm/Ping", { headers: { authorization: `Bearer ${forged}` } }, 401],
        ["/api/AuthorityRvdm/Ping", { headers: { authorization: `Bearer ${expired}` } }, 401],
        ["/api/AuthorityRvdm/Ping", { headers: { authorization: `Basic ${Buffer.from(`${key.apiKey}:${key.secret}`).toString("base64")}` } }, 401],
        ["/api/AuthorityRvdm/Ping", { method: "DELETE", headers: { authorization: `Bearer ${bearerToken}` } }, 405],
      ];
      for (const [path, init, status] of errors) assert.equal((await call(path, init)).status, status, `${init.method ?? "GET"} ${path}`);
      for (const id of ids) assert.equal((await call(`/api/AuthorityRvdm/WorkItem/${id}`, { headers: { authorization: `Bearer ${bearerToken}` } })).status, 200);

      await waitUntil("every item's webhook delivered", () => receiver.deliveries.length >= ids.length, undefined, 250);
      assert.equal(receiver.deliveries.length, ids.length, "every item's webhook was delivered during the run");
      const [stored] = await queryRows<{ webhook_secret: string }>(created.location, "SELECT webhook_secret FROM companies WHERE company_id = $1", [COMPANY]);
      assert.doesNotMatch(stored!.webhook_secret, /whsec_/, "the secret stored in plain text was encrypted at start");
      dataKey = readFileSync(join(dirname(created.location.kind === "sqlite" ? created.location.path : ""), "data-encryption-key"), "utf8").trim();
    } finally {
      await server.stop();
      receiver.server.close();
      await created.cleanup();
    }

    const logs = server.output();
    // One completion line per request (20 made above), so the scan below has something to read.
    const completions = logs.split("\n").filter((line) => line.includes('"msg":"request completed"')).length;
    assert.ok(completions >= 20, `the run logged every request (${completions} completion lines)`);
    const secrets: Array<[string, string]> = [
      ["API secret", key.secret],
      ["wrong secret", wrongSecret],
      ["webhook secret", whsec],
      ["webhook secret body", whsec.slice("whsec_".length)],
      ["JWT signing key", TEST_JWT_SECRET],
      ["data encryption key", dataKey],
      ...tokens.flatMap((token, i): Array<[string, string]> => [
        [`bearer token ${i}`, token],
        [`bearer token ${i} signature`, token.split(".")[2]!],
      ]),
    ];
    for (const [name, value] of secrets) assert.ok(!logs.includes(value), `the logs contain the ${name}`);
    assert.doesNotMatch(logs, /whsec_/, "no whsec_ secret of any company");
    assert.doesNotMatch(logs, /wis_[A-Za-z0-9_-]{20,}/, "no API secret of any key");
    assert.doesNotMatch(logs, /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}/, "no JWT");
  });
});
