/**
 * The SDK's retry rules, against a scripted HTTP server on loopback: statuses our own service
 * cannot be made to answer on cue (429 with a given Retry-After, 503 with an HTTP date, a dead
 * port). Each script entry answers one request, in order.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, describe, test } from "node:test";
import { backoffDelay, parseRetryAfter, WorkItemApiError, WorkItemClient, WorkItemNetworkError } from "../../src/client/index.ts";
import { TokenCache } from "../../src/client/token-cache.ts";
import type { AuthorityRvdmWorkItemCreate } from "../../src/client/index.ts";
import { freePort } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";

type Step = (request: IncomingMessage, response: ServerResponse) => void;
interface Seen {
  method: string;
  url: string;
  at: number;
  authorization?: string;
  idempotencyKey?: string;
}

const problem = (status: number, type: string, extraHeaders: Record<string, string> = {}): Step => (_req, res) => {
  res.writeHead(status, { "content-type": "application/problem+json", ...extraHeaders });
  res.end(JSON.stringify({ type, title: "t", status, detail: `status ${status}`, instance: "/x", traceId: `trace-${status}` }));
};
const json = (body: unknown): Step => (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const token = (name: string, ttlSeconds = 1200): Step => json({ bearerToken: name, expires: new Date(Date.now() + ttlSeconds * 1000).toISOString() });
const hangUp: Step = (req) => req.socket.destroy();

describe("WorkItemClient retries (scripted server)", () => {
  let server: Server;
  let baseUrl: string;
  let script: Step[] = [];
  let seen: Seen[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        at: Date.now(),
        authorization: req.headers.authorization,
        idempotencyKey: req.headers["idempotency-key"] as string | undefined,
      });
      req.resume();
      req.on("end", () => {
        const step = script.shift();
        if (step) step(req, res);
        else problem(500, "urn:unexpected")(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
  });
  after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const run = (steps: Step[], options: Partial<ConstructorParameters<typeof WorkItemClient>[0]> = {}) => {
    script = [...steps];
    seen = [];
    return new WorkItemClient({ baseUrl, apiKey: "wia_1_00", secret: "wis_x", retryBaseDelayMs: 20, retryMaxDelayMs: 100, ...options });
  };
  const body = validWorkItem() as AuthorityRvdmWorkItemCreate;

  test("429 with Retry-After in seconds is waited out, then the call succeeds", async () => {
    const sdk = run([token("t1"), problem(429, "urn:rate-limited", { "retry-after": "1" }), json({ status: "ok" })]);
    await sdk.authenticate();
    const started = Date.now();
    assert.deepEqual(await sdk.health(), { status: "ok" });
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms`);
    assert.equal(seen.length, 3);
  });

  test("503 with Retry-After as an HTTP date is honoured", async () => {
    const sdk = run([problem(503, "urn:unavailable", { "retry-after": new Date(Date.now() + 2000).toUTCString() }), json({ status: "ready" })]);
    const started = Date.now();
    assert.deepEqual(await sdk.ready(), { status: "ready" });
    // HTTP dates have whole seconds: the wait is between 1 and 2 s.
    assert.ok(Date.now() - started >= 900, `waited ${Date.now() - started} ms`);
  });

  test("a Retry-After beyond maxRetryAfterMs surfaces the error instead of waiting", async () => {
    const sdk = run([problem(503, "urn:unavailable", { "retry-after": "3600" })], { maxRetryAfterMs: 5000 });
    const started = Date.now();
    const error = await sdk.health().then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WorkItemApiError);
    assert.equal(error.status, 503);
    assert.ok(Date.now() - started < 1000);
  });

  test("retries stop after maxRetries and the last problem surfaces", async () => {
    const sdk = run(Array.from({ length: 5 }, () => problem(503, "urn:unavailable")), { maxRetries: 2 });
    const error = await sdk.health().then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WorkItemApiError);
    assert.equal(error.traceId, "trace-503");
    assert.equal(seen.length, 3, "one try and two retries");
  });

  test("a dropped connection is retried with the same Idempotency-Key; 409 in flight is retried too", async () => {
    const sdk = run([token("t1"), hangUp, problem(409, "urn:work-item-api:problem:idempotency-in-flight", { "retry-after": "0" }), json({ workBatchId: 1, workItemId: 9 })]);
    const added = await sdk.addWorkItemCreate(body);
    assert.deepEqual({ workBatchId: added.workBatchId, workItemId: added.workItemId }, { workBatchId: 1, workItemId: 9 });
    const keys = seen.filter((s) => s.url.endsWith("AddWorkItemCreate")).map((s) => s.idempotencyKey);
    assert.equal(keys.length, 3);
    assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
    assert.ok(keys.every((k) => k === keys[0]));
  });

  test("a bulk add keeps one Idempotency-Key across a dropped connection and a 429, and hands back the results", async () => {
    const results = [
      { index: 0, workBatchId: 1, workItemId: 9 },
      { index: 1, status: 400, errors: { plannedLoad: ["must be ≥ 0"] } },
    ];
    const sdk = run([token("t1"), hangUp, problem(429, "urn:work-item-api:problem:rate-limited", { "retry-after": "0" }), json({ results })]);
    const added = await sdk.addWorkItemCreateBulk({ items: [body, { ...body, plannedLoad: -1 }] }, { idempotencyKey: "bulk-key" });
    assert.deepEqual(added, { results, idempotencyKey: "bulk-key", replayed: false });
    const keys = seen.filter((s) => s.url.endsWith("AddWorkItemCreateBulk")).map((s) => s.idempotencyKey);
    assert.deepEqual(keys, ["bulk-key", "bulk-key", "bulk-key"]);
    const generated = run([token("t2"), json({ results })]);
    assert.match((await generated.addWorkItemCreateBulk({ items: [body] })).idempotencyKey, /^[0-9a-f-]{36}$/, "a key is made when none is given");
  });

  test("an ordinary 409 is not retried", async () => {
    const sdk = run([token("t1"), problem(409, "urn:work-item-api:problem:state-conflict")]);
    const error = await sdk.getWorkItem(1).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WorkItemApiError);
    assert.equal(error.status, 409);
    assert.equal(seen.length, 2);
  });

  test("a refused port gives a WorkItemNetworkError after the retries", async () => {
    const port = await freePort();
    const sdk = new WorkItemClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "a", secret: "b", maxRetries: 2, retryBaseDelayMs: 10 });
    const error = await sdk.health().then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WorkItemNetworkError, String(error));
    assert.equal(error.attempts, 3);
    assert.match(error.message, /GET \/healthz got no answer after 3 attempt/);
  });

  test("a 401 gets exactly one re-authentication; a second 401 surfaces", async () => {
    const sdk = run([token("t1"), problem(401, "urn:unauthorized"), token("t2"), problem(401, "urn:unauthorized")]);
    const error = await sdk.pingAuthorityRvdm().then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WorkItemApiError);
    assert.equal(error.status, 401);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url} ${s.authorization ?? "-"}`),
      ["POST /api/Login/Authenticate -", "GET /api/AuthorityRvdm/Ping Bearer t1", "POST /api/Login/Authenticate -", "GET /api/AuthorityRvdm/Ping Bearer t2"],
    );
  });

  test("a cancel repeated after a lost answer that meets a 409 reads the item back", async () => {
    const cancelled = { workItemId: 5, status: "Cancelled" };
    const sdk = run([token("t1"), hangUp, problem(409, "urn:work-item-api:problem:state-conflict"), json(cancelled)]);
    assert.deepEqual(await sdk.cancelWorkItem(5), cancelled);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url}`),
      ["POST /api/Login/Authenticate", "DELETE /api/AuthorityRvdm/WorkItem/5", "DELETE /api/AuthorityRvdm/WorkItem/5", "GET /api/AuthorityRvdm/WorkItem/5"],
    );
  });

  test("a caller's abort stops the retries at once", async () => {
    const sdk = run([problem(503, "urn:unavailable", { "retry-after": "30" })]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("caller gave up")), 200);
    await assert.rejects(sdk.health({ signal: controller.signal }), /caller gave up/);
  });
});

describe("token cache", () => {
  test("concurrent callers share one login; the token is renewed 30 s before expiry", async () => {
    let now = 1_000_000;
    let logins = 0;
    const cache = new TokenCache(
      async () => {
        logins++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { bearerToken: `t${logins}`, expires: new Date(now + 1_200_000).toISOString() };
      },
      30_000,
      () => now,
    );
    const tokens = await Promise.all(Array.from({ length: 50 }, () => cache.get()));
    assert.equal(logins, 1);
    assert.ok(tokens.every((t) => t === "t1"));
    now += 1_200_000 - 30_001;
    assert.equal(await cache.get(), "t1", "still outside the margin");
    now += 2;
    assert.equal(await cache.get(), "t2", "renewed inside the margin");
  });

  test("a failed renewal falls back to the still-valid token; a failed first login throws", async () => {
    let now = 0;
    let fail = false;
    const cache = new TokenCache(
      async () => {
        if (fail) throw new Error("login down");
        return { bearerToken: "t", expires: new Date(now + 60_000).toISOString() };
      },
      30_000,
      () => now,
    );
    assert.equal(await cache.get(), "t");
    fail = true;
    now = 40_000;
    assert.equal(await cache.get(), "t", "inside the margin, but not expired");
    now = 60_000;
    await assert.rejects(cache.get(), /login down/);
  });

  test("the server's Date header cancels out a skewed local clock", async () => {
    const localNow = 5_000_000;
    const serverNow = localNow - 3_600_000; // the client's clock runs an hour fast
    const cache = new TokenCache(async () => ({ bearerToken: "t", expires: new Date(serverNow + 1_200_000).toISOString(), serverDate: serverNow }), 30_000, () => localNow);
    const cached = await cache.refresh();
    assert.equal(cached.expiresAt, localNow + 1_200_000);
  });
});

describe("backoff and Retry-After", () => {
  test("backoff grows, is capped, and is never zero", () => {
    for (let retry = 0; retry < 12; retry++) {
      for (const r of [0, 0.5, 0.999]) {
        const delay = backoffDelay(retry, 100, 5000, () => r);
        const step = Math.min(5000, 100 * 2 ** retry);
        assert.ok(delay >= step / 2 && delay <= step, `retry ${retry}: ${delay}`);
      }
    }
  });

  test("Retry-After: seconds, an HTTP date, and junk", () => {
    const now = Date.parse("2026-11-21T14:00:00Z");
    assert.equal(parseRetryAfter("7", now), 7000);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 14:00:05 GMT", now), 5000);
    assert.equal(parseRetryAfter("Sat, 21 Nov 2026 13:00:00 GMT", now), 0);
    assert.equal(parseRetryAfter("soon", now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });
});
