/**
 * The SDK against the real service process (SPEC §9): one login for many calls, refresh before
 * expiry, transparent re-authentication after a signing-key change, and a lost answer retried
 * into exactly one item.
 */
import assert from "node:assert/strict";
import { createServer, request as httpRequest, type Server } from "node:http";
import { after, before, describe, test } from "node:test";
import { WorkItemApiError, WorkItemClient } from "../../src/client/index.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { createKeyWithCli, freePort, startServer, type CliKey, type ServerProcess } from "../helpers/processes.ts";
import { metricValue } from "../helpers/prometheus.ts";
import type { AuthorityRvdmWorkItemCreate } from "../../src/client/index.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

interface Recorded {
  method: string;
  path: string;
  status: number | "no answer";
  at: number;
}

/** The global fetch, with every attempt the SDK makes written down. */
function recordingFetch() {
  const log: Recorded[] = [];
  const recorded: typeof fetch = async (input, init) => {
    const entry = { method: init?.method ?? "GET", path: new URL(String(input)).pathname, at: Date.now() };
    try {
      const response = await fetch(input, init);
      log.push({ ...entry, status: response.status });
      return response;
    } catch (error) {
      log.push({ ...entry, status: "no answer" });
      throw error;
    }
  };
  return { fetch: recorded, log, logins: () => log.filter((e) => e.path === "/api/Login/Authenticate").length };
}

const item = (overrides: Record<string, unknown> = {}) => validWorkItem(overrides) as AuthorityRvdmWorkItemCreate;
const scrape = async (server: ServerProcess) => (await fetch(`${server.baseUrl}/metrics`)).text();
const JWT_A = "first-signing-key-first-signing-key-0123456789";
const JWT_B = "second-signing-key-second-signing-key-012345678";

describe("WorkItemClient against the real server", { timeout: HANG_TIMEOUT_MS }, () => {
  let data: Awaited<ReturnType<typeof sqliteBackend.create>>;
  let server: ServerProcess;
  let key: CliKey;
  before(async () => {
    data = await sqliteBackend.create();
    server = await startServer({ DATABASE_URL: data.databaseUrl, JWT_SECRET: JWT_A, RATE_LIMIT_TENANT_RPS: "0" });
    key = await createKeyWithCli(data.databaseUrl, 71);
  });
  after(async () => {
    await server?.stop();
    await data?.cleanup();
  });
  const client = (extra: Partial<ConstructorParameters<typeof WorkItemClient>[0]> = {}) =>
    new WorkItemClient({ baseUrl: server.baseUrl, apiKey: key.apiKey, secret: key.secret, ...extra });

  test("one login serves 100 concurrent calls", async () => {
    const before = metricValue(await scrape(server), "work_item_api_tokens_issued_total");
    const recorder = recordingFetch();
    const sdk = client({ fetch: recorder.fetch });
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? sdk.pingAuthorityRvdm() : sdk.listWorkItems({ limit: 1 }).then((page) => JSON.stringify(page)))),
    );
    assert.equal(answers.length, 100);
    assert.match(answers[0]!, /^Pong --> /);
    assert.equal(recorder.logins(), 1, "one login on the wire");
    assert.equal(metricValue(await scrape(server), "work_item_api_tokens_issued_total") - before, 1, "one token issued by the server");
    await sdk.pingVlmMad();
    assert.equal(recorder.logins(), 1, "later calls reuse the cached token");
  });

  test("typed methods cover the routes and errors carry the problem details", async () => {
    const sdk = client();
    const body = item({ customerReference: "TYPED-1" });
    const added = await sdk.addWorkItemCreate(body, { idempotencyKey: "typed-1" });
    assert.equal(added.idempotencyKey, "typed-1");
    assert.equal(added.replayed, false);
    const again = await sdk.addWorkItemCreate(body, { idempotencyKey: "typed-1" });
    assert.deepEqual({ ...again }, { ...added, replayed: true });

    const view = await sdk.getWorkItem(added.workItemId);
    assert.equal(view.customerReference, "TYPED-1");
    assert.equal(view.status, "New");
    const batch = await sdk.getWorkBatch(added.workBatchId);
    assert.equal(batch.status, "Open");
    assert.ok(batch.counts.new >= 1);

    for (let i = 0; i < 5; i++) await sdk.addWorkItemCreate(item({ customerReference: "PAGED" }));
    const page = await sdk.listWorkItems({ customerReference: "PAGED", limit: 2 });
    assert.equal(page.items.length, 2);
    assert.ok(page.nextCursor);
    const all = [];
    for await (const each of sdk.iterateWorkItems({ customerReference: "PAGED", limit: 2 })) all.push(each.workItemId);
    assert.equal(all.length, 5, "the iterator walks all three pages");
    assert.deepEqual(all, [...all].sort((a, b) => b - a), "newest first");

    assert.deepEqual(await sdk.health(), { status: "ok" });
    assert.deepEqual(await sdk.ready(), { status: "ready" });
    assert.match(await sdk.metrics(), /work_item_api_http_request_duration_seconds_bucket/);
    assert.equal((await sdk.openApiDocument()).openapi, "3.1.0");

    const notFound = await sdk.getWorkItem(999_999).then(() => undefined, (error: unknown) => error);
    assert.ok(notFound instanceof WorkItemApiError);
    assert.equal(notFound.status, 404);
    assert.equal(notFound.type, "urn:work-item-api:problem:not-found");
    assert.equal(notFound.title, "Not Found");
    assert.match(notFound.traceId, /.{8,}/);
    assert.match(notFound.message, /GET \/api\/AuthorityRvdm\/WorkItem\/999999 answered 404/);

    const invalid = await sdk.addWorkItemCreate({ ...item(), plannedLoad: -1, customerReference: "" }).then(() => undefined, (error: unknown) => error);
    assert.ok(invalid instanceof WorkItemApiError);
    assert.equal(invalid.status, 400);
    assert.deepEqual(Object.keys(invalid.errors ?? {}).sort(), ["customerReference", "plannedLoad"]);

    const bulkBody = { items: [item({ customerReference: "BULK-0" }), { ...item(), plannedLoad: -1 }, item({ customerReference: "BULK-2" })] };
    const bulk = await sdk.addWorkItemCreateBulk(bulkBody, { idempotencyKey: "typed-bulk-1" });
    assert.equal(bulk.replayed, false);
    assert.deepEqual(bulk.results.map((r) => r.index), [0, 1, 2]);
    const [stored0, refused1, stored2] = bulk.results;
    assert.ok(stored0 && "workItemId" in stored0 && stored2 && "workItemId" in stored2);
    assert.ok(refused1 && "errors" in refused1);
    assert.equal(refused1.status, 400);
    assert.deepEqual(Object.keys(refused1.errors), ["plannedLoad"]);
    assert.equal((await sdk.getWorkItem(stored2.workItemId)).customerReference, "BULK-2");
    assert.deepEqual(await sdk.addWorkItemCreateBulk(bulkBody, { idempotencyKey: "typed-bulk-1" }), { ...bulk, replayed: true });
    const allOrNothing = await sdk.addWorkItemCreateBulk({ ...bulkBody, allOrNothing: true }).then(() => undefined, (error: unknown) => error);
    assert.ok(allOrNothing instanceof WorkItemApiError);
    assert.equal(allOrNothing.status, 400);
    assert.deepEqual(Object.keys(allOrNothing.errors ?? {}), ["items[1].plannedLoad"]);

    const badLogin = new WorkItemClient({ baseUrl: server.baseUrl, apiKey: key.apiKey, secret: "wis_wrong" });
    const refused = await badLogin.pingAuthorityRvdm().then(() => undefined, (error: unknown) => error);
    assert.ok(refused instanceof WorkItemApiError);
    assert.equal(refused.status, 401);
  });

  test("cancelWorkItem cancels a New item and a second cancel is a 409", async (t) => {
    const doc = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    if (!doc.paths["/api/AuthorityRvdm/WorkItem/{workItemId}"]?.delete) {
      t.todo("DELETE /api/AuthorityRvdm/WorkItem/{id} is built on the lifecycle branch; this test runs once it is merged");
      return;
    }
    const sdk = client();
    const added = await sdk.addWorkItemCreate(item({ customerReference: "CANCEL-1" }));
    const cancelled = await sdk.cancelWorkItem(added.workItemId);
    assert.equal(cancelled.status, "Cancelled");
    const second = await sdk.cancelWorkItem(added.workItemId).then(() => undefined, (error: unknown) => error);
    assert.ok(second instanceof WorkItemApiError);
    assert.equal(second.status, 409);
  });

  test("addWorkItemChange and addWorkItemWithdraw: applied before filing, replayed under their key, a 409 carries its code", async () => {
    const sdk = client();
    const original = await sdk.addWorkItemCreate(item({ customerReference: "DOC-1" }));
    const change = await sdk.addWorkItemChange({ originalWorkItemId: original.workItemId, customerReference: "DOC-1-C", changes: { plannedLoad: 12 } }, { idempotencyKey: "change-1" });
    const replay = await sdk.addWorkItemChange({ originalWorkItemId: original.workItemId, customerReference: "DOC-1-C", changes: { plannedLoad: 12 } }, { idempotencyKey: "change-1" });
    assert.deepEqual([replay.workItemId, replay.replayed], [change.workItemId, true]);
    const changed = await sdk.getWorkItem(original.workItemId);
    assert.deepEqual([changed.revision, changed.request.plannedLoad], [1, 12]);
    assert.deepEqual((await sdk.getWorkItem(change.workItemId)).result, { appliedBeforeFiling: true, revision: 1 });
    await sdk.addWorkItemWithdraw({ originalWorkItemId: original.workItemId, customerReference: "DOC-1-W", reason: "called off" });
    assert.equal((await sdk.getWorkItem(original.workItemId)).status, "Cancelled");
    const refused = await sdk
      .addWorkItemChange({ originalWorkItemId: original.workItemId, customerReference: "DOC-1-C2", changes: { plannedLoad: 3 } })
      .then(() => undefined, (error: unknown) => error);
    assert.ok(refused instanceof WorkItemApiError);
    assert.deepEqual([refused.status, refused.code], [409, "ORIGINAL_CLOSED"]);
    const changes = await sdk.listWorkItems({ originalWorkItemId: original.workItemId });
    assert.deepEqual(changes.items.map((each) => each.kind).sort(), ["change", "withdraw"]);
  });

  test("an answer lost after the server committed is retried into exactly one item", async () => {
    const proxy = await startDroppingProxy(server.port);
    try {
      // Control: without an Idempotency-Key the same lost answer makes a duplicate, so the
      // proxy really drops an answer the server had committed.
      const token = await client().authenticate();
      const raw = () =>
        fetch(`${proxy.baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token.bearerToken}` },
          body: JSON.stringify(item({ customerReference: "LOST-RAW" })),
        });
      proxy.dropNext();
      await assert.rejects(raw());
      assert.equal((await raw()).status, 200);
      const rawItems = await client().listWorkItems({ customerReference: "LOST-RAW" });
      assert.equal(rawItems.items.length, 2, "control: a blind repeat stores a second item");

      const createdBefore = metricValue(await scrape(server), "work_item_api_work_items_created_total");
      const recorder = recordingFetch();
      const sdk = new WorkItemClient({ baseUrl: proxy.baseUrl, apiKey: key.apiKey, secret: key.secret, fetch: recorder.fetch, retryBaseDelayMs: 50 });
      await sdk.authenticate();
      proxy.dropNext();
      const added = await sdk.addWorkItemCreate(item({ customerReference: "LOST-SDK" }));
      const adds = recorder.log.filter((e) => e.path.endsWith("/AddWorkItemCreate"));
      assert.deepEqual(
        adds.map((e) => e.status),
        ["no answer", 200],
      );
      assert.equal(added.replayed, true, "the repeat got the first answer back");
      const keys = proxy.idempotencyKeys.slice(-2);
      assert.equal(keys[0], keys[1], "both attempts carried the same Idempotency-Key");
      assert.equal(keys[0], added.idempotencyKey);
      const items = await client().listWorkItems({ customerReference: "LOST-SDK" });
      assert.equal(items.items.length, 1, "exactly one item stored");
      assert.equal(items.items[0]!.workItemId, added.workItemId);
      assert.equal(metricValue(await scrape(server), "work_item_api_work_items_created_total") - createdBefore, 1);
    } finally {
      await proxy.close();
    }
  });

  test("a bulk add whose answer is lost is retried into exactly one set of items", async () => {
    const proxy = await startDroppingProxy(server.port);
    try {
      const recorder = recordingFetch();
      const sdk = new WorkItemClient({ baseUrl: proxy.baseUrl, apiKey: key.apiKey, secret: key.secret, fetch: recorder.fetch, retryBaseDelayMs: 50 });
      await sdk.authenticate();
      proxy.dropNext();
      const added = await sdk.addWorkItemCreateBulk({ items: [item({ customerReference: "LOST-BULK" }), item({ customerReference: "LOST-BULK" })] });
      assert.deepEqual(recorder.log.filter((e) => e.path.endsWith("/AddWorkItemCreateBulk")).map((e) => e.status), ["no answer", 200]);
      assert.equal(added.replayed, true, "the repeat got the first answer back");
      const items = await client().listWorkItems({ customerReference: "LOST-BULK" });
      assert.deepEqual(items.items.map((i) => i.workItemId).sort(), added.results.map((r) => ("workItemId" in r ? r.workItemId : 0)).sort(), "exactly the two items stored");
    } finally {
      await proxy.close();
    }
  });
});

describe("WorkItemClient token lifetime", { timeout: HANG_TIMEOUT_MS }, () => {
  test("with TOKEN_TTL_SECONDS=35 the token is renewed 30 s before it expires, never refused", async () => {
    const data = await sqliteBackend.create();
    const server = await startServer({ DATABASE_URL: data.databaseUrl, JWT_SECRET: JWT_A, TOKEN_TTL_SECONDS: "35", RATE_LIMIT_TENANT_RPS: "0" });
    try {
      const key = await createKeyWithCli(data.databaseUrl, 72);
      const recorder = recordingFetch();
      const sdk = new WorkItemClient({ baseUrl: server.baseUrl, apiKey: key.apiKey, secret: key.secret, fetch: recorder.fetch });
      const first = await sdk.authenticate();
      const firstExpires = Date.parse(first.expires);
      for (let i = 0; i < 5; i++) await sdk.pingAuthorityRvdm();
      assert.equal(recorder.logins(), 1, "no login per request");
      // 35 s lifetime − 30 s margin: the cached token is due for renewal after about 5 s.
      await new Promise((resolve) => setTimeout(resolve, 6000));
      await sdk.pingAuthorityRvdm();
      assert.equal(recorder.logins(), 2, "renewed once the margin was reached");
      const renewal = recorder.log.filter((e) => e.path === "/api/Login/Authenticate")[1]!;
      assert.ok(firstExpires - renewal.at > 25_000, `renewed ${firstExpires - renewal.at} ms before the old token expired`);
      assert.deepEqual(
        recorder.log.filter((e) => e.status === 401),
        [],
        "no request was refused",
      );
      assert.equal(metricValue(await (await fetch(`${server.baseUrl}/metrics`)).text(), "work_item_api_http_request_duration_seconds_count", { status_code: "401" }), 0);
    } finally {
      await server.stop();
      await data.cleanup();
    }
  });

  test("after a restart with a new JWT_SECRET, one 401 is answered by one re-authentication", async () => {
    const data = await sqliteBackend.create();
    const port = await freePort();
    let server = await startServer({ DATABASE_URL: data.databaseUrl, JWT_SECRET: JWT_A, RATE_LIMIT_TENANT_RPS: "0" }, { port });
    try {
      const key = await createKeyWithCli(data.databaseUrl, 73);
      const recorder = recordingFetch();
      const sdk = new WorkItemClient({ baseUrl: server.baseUrl, apiKey: key.apiKey, secret: key.secret, fetch: recorder.fetch });
      assert.match(await sdk.pingAuthorityRvdm(), /^Pong/);
      await server.stop();
      server = await startServer({ DATABASE_URL: data.databaseUrl, JWT_SECRET: JWT_B, RATE_LIMIT_TENANT_RPS: "0" }, { port });
      const mark = recorder.log.length;
      const added = await sdk.addWorkItemCreate(item({ customerReference: "AFTER-RESTART" }));
      assert.ok(added.workItemId > 0);
      assert.deepEqual(
        recorder.log.slice(mark).map((e) => `${e.method} ${e.path} ${e.status}`),
        ["POST /api/AuthorityRvdm/AddWorkItemCreate 401", "POST /api/Login/Authenticate 200", "POST /api/AuthorityRvdm/AddWorkItemCreate 200"],
      );
      assert.equal((await sdk.listWorkItems({ customerReference: "AFTER-RESTART" })).items.length, 1);
      assert.equal(recorder.logins(), 2);
    } finally {
      await server.stop();
      await data.cleanup();
    }
  });
});

interface DroppingProxy {
  baseUrl: string;
  /** The next AddWorkItemCreate(Bulk) is forwarded, answered upstream, and its answer thrown away. */
  dropNext(): void;
  idempotencyKeys: string[];
  close(): Promise<void>;
}

/** A loopback proxy that can destroy the client's socket once the upstream has answered. */
async function startDroppingProxy(upstreamPort: number): Promise<DroppingProxy> {
  let drop = false;
  const idempotencyKeys: string[] = [];
  const proxy: Server = createServer((incoming, outgoing) => {
    const isAdd = /\/AddWorkItemCreate(Bulk)?$/.test(incoming.url ?? "");
    if (isAdd && typeof incoming.headers["idempotency-key"] === "string") idempotencyKeys.push(incoming.headers["idempotency-key"]);
    const dropThis = isAdd && drop;
    if (dropThis) drop = false;
    const upstream = httpRequest({ host: "127.0.0.1", port: upstreamPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => {
        // The server has answered, so it has committed: now the client loses the answer.
        if (dropThis) return incoming.socket.destroy();
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        outgoing.end(Buffer.concat(chunks));
      });
    });
    upstream.on("error", () => incoming.socket.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const address = proxy.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    dropNext: () => {
      drop = true;
    },
    idempotencyKeys,
    close: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
