/**
 * The log as an operator reads it: one JSON completion line per request, joined to the problem
 * details by reqId = traceId, naming tenant, route pattern, status and duration, and never a
 * secret, API secret, bearer token or webhook secret.
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { createKey } from "../src/admin/admin.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";
import { createWebhookSecrets } from "../src/webhooks/secrets.ts";
import { availableBackends, openFreshStore } from "./helpers/backends.ts";
import { TEST_JWT_SECRET, bearer, problem, validWorkItem } from "./helpers/test-app.ts";

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  companyId?: number;
  route?: string;
  method?: string;
  statusCode?: number;
  durationMs?: number;
  [key: string]: unknown;
}

function capture() {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text, lines: () => text.trim().split("\n").map((line) => JSON.parse(line) as Line) };
}

for (const backend of await availableBackends()) {
  describe(`request log [${backend.name}]`, () => {
    test("one completion line per request; no credential ever appears", async () => {
      const fresh = await openFreshStore(backend);
      const log = capture();
      const config = loadConfig({ DATABASE_URL: fresh.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: "info", RATE_LIMIT_TENANT_RPS: "0" });
      const logger = createLogger(config, log.stream);
      // Intake checks a webhook host by resolving it: this one resolves to a public address here.
      const app = await buildApp(config, { store: fresh.store, logger, webhookLookup: async () => [{ address: "93.184.215.14", family: 4 }] });
      try {
        const key = await createKey(fresh.store, { companyId: 91 });
        const hook = await createWebhookSecrets(fresh.store, config).current(91);
        const wrongSecret = `${key.secret.slice(0, -4)}XXXX`;

        const login = await app.inject({ method: "POST", url: "/api/Login/Authenticate", payload: { apiKey: key.apiKey, secret: key.secret } });
        const token = login.json<{ bearerToken: string }>().bearerToken;
        const refusedLogin = await app.inject({ method: "POST", url: "/api/Login/Authenticate", payload: { apiKey: key.apiKey, secret: wrongSecret } });
        const adds = [
          await app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { ...bearer(token), "idempotency-key": "log-1" }, payload: validWorkItem() }),
          await app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(token), payload: validWorkItem({ webhookUrl: `https://hooks.example/x?secret=${hook!}` }) }),
        ];
        const invalid = await app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(token), payload: { customerReference: "" } });
        const forged = await app.inject({ url: "/api/AuthorityRvdm/Ping", headers: bearer(`${token.slice(0, -3)}abc`) });
        const missing = await app.inject({ url: "/api/AuthorityRvdm/WorkItem/999999", headers: bearer(token) });
        const requests = [login, refusedLogin, ...adds, invalid, forged, missing];
        // A careless log call with credentials in it is redacted too.
        app.log.info({ secret: key.secret, bearerToken: token, webhookSecret: hook!, headers: { authorization: `Bearer ${token}` } }, "careless");

        const completed = log.lines().filter((line) => line.msg === "request completed");
        assert.equal(completed.length, requests.length, "exactly one completion line per request");
        assert.deepEqual(
          completed.map((line) => [line.method, line.route, line.statusCode]),
          [
            ["POST", "/api/Login/Authenticate", 200],
            ["POST", "/api/Login/Authenticate", 401],
            ["POST", "/api/AuthorityRvdm/AddWorkItemCreate", 200],
            ["POST", "/api/AuthorityRvdm/AddWorkItemCreate", 200],
            ["POST", "/api/AuthorityRvdm/AddWorkItemCreate", 400],
            ["GET", "/api/AuthorityRvdm/Ping", 401],
            ["GET", "/api/AuthorityRvdm/WorkItem/:workItemId", 404],
          ],
        );
        for (const line of completed) {
          assert.equal(typeof line.reqId, "string");
          assert.ok(typeof line.durationMs === "number" && line.durationMs >= 0);
        }
        assert.deepEqual(
          completed.map((line) => line.companyId),
          [undefined, undefined, 91, 91, 91, undefined, 91],
          "the tenant once the guard named it",
        );
        for (const [index, response] of requests.entries()) {
          if (response.statusCode >= 400) assert.equal(completed[index]!.reqId, problem(response).traceId, "reqId is the problem's traceId");
        }

        const text = log.text();
        const [, , signature] = token.split(".");
        for (const [name, secret] of Object.entries({ secret: key.secret, wrongSecret, token, signature: signature!, webhookSecret: hook! })) {
          assert.ok(!text.includes(secret), `${name} appears in the log`);
        }
        assert.doesNotMatch(text, /wis_|whsec_|Bearer ey/);
        assert.match(text, /"careless"/);
      } finally {
        await app.close();
        await fresh.cleanup();
      }
    });
  });
}
