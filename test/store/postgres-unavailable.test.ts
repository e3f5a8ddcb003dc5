/**
 * PostgreSQL going away, for real: the store talks to the database through a TCP relay this
 * test can freeze and cut. Every failure becomes StoreUnavailableError, the API answers 503 with
 * Retry-After and no internals, a group cut mid-flight stores nothing, and the store recovers
 * by itself once the database is back.
 */
import assert from "node:assert/strict";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/app.ts";
import { createKey } from "../../src/admin/admin.ts";
import { loadConfig } from "../../src/config.ts";
import { StoreUnavailableError } from "../../src/store/errors.ts";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.ts";
import type { Store } from "../../src/store/store.ts";
import type { NewWorkItem } from "../../src/store/store.ts";
import { availableBackends, postgresBackend } from "../helpers/backends.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** A relay to the real PostgreSQL that can drop traffic (freeze) and close every connection (cut). */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  frozen = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.frozen = false;
    this.server = createServer((client) => {
      const upstream = connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => undefined);
      }
      client.on("data", (chunk) => void (this.frozen || upstream.write(chunk)));
      upstream.on("data", (chunk) => void (this.frozen || client.write(chunk)));
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise((resolve) => this.server?.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

const hasPostgres = (await availableBackends()).some((backend) => backend.name === "postgres");

const item = (companyId: number, customerReference: string): NewWorkItem => ({
  companyId,
  workType: "AuthorityRvdm",
  customerReference,
  documentReference: null,
  webhookUrl: null,
  request: {},
  batchMaxItems: 1000,
});

describe("PostgreSQL unavailable", { skip: !hasPostgres && "PostgreSQL is not available", timeout: HANG_TIMEOUT_MS }, () => {
  let location: Awaited<ReturnType<typeof postgresBackend.create>>;
  let relay: Relay;
  let url: string;
  let store: Store;
  let app: FastifyInstance;
  let token: string;

  before(async () => {
    location = await postgresBackend.create();
    const direct = new URL(location.databaseUrl);
    relay = new Relay({ host: direct.hostname, port: Number(direct.port || 5432) });
    await relay.start();
    direct.hostname = "127.0.0.1";
    direct.port = String(relay.port);
    url = direct.toString();
    store = await openPostgresStore(url);
    const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: "silent", RATE_LIMIT_TENANT_RPS: "0" });
    app = await buildApp(config, { store });
    const key = await createKey(store, { companyId: 61 });
    token = (await app.inject({ method: "POST", url: "/api/Login/Authenticate", payload: { apiKey: key.apiKey, secret: key.secret } })).json<{ bearerToken: string }>().bearerToken;
  });
  after(async () => {
    await app.close();
    await store.close();
    await relay.cut();
    await location.cleanup();
  });

  test("a group cut off mid-flight is rejected as unavailable and stores nothing", async () => {
    relay.frozen = true;
    const pending = Promise.allSettled([store.addWorkItem(item(61, "cut-1")), store.addWorkItem(item(61, "cut-2"))]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await relay.cut();
    for (const result of await pending) {
      assert.equal(result.status, "rejected");
      assert.ok((result as PromiseRejectedResult).reason instanceof StoreUnavailableError, String((result as PromiseRejectedResult).reason));
    }
  });

  test("while it is down every call rejects with StoreUnavailableError, and opening a store does too", async () => {
    await assert.rejects(store.ping(), StoreUnavailableError);
    await assert.rejects(store.addWorkItem(item(61, "down")), StoreUnavailableError);
    await assert.rejects(store.getWorkItem(61, 1), StoreUnavailableError);
    await assert.rejects(store.listWorkItems(61, { limit: 5 }), StoreUnavailableError);
    await assert.rejects(store.cancelWorkItem(61, 1, new Date().toISOString()), StoreUnavailableError, "a transaction too");
    await assert.rejects(openPostgresStore(url), StoreUnavailableError);
  });

  test("while it is down the API answers 503 with Retry-After and no internals", async () => {
    const responses = [
      await app.inject({ url: "/readyz" }),
      await app.inject({
        method: "POST",
        url: "/api/AuthorityRvdm/AddWorkItemCreate",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        payload: JSON.stringify(validWorkItem()),
      }),
      await app.inject({ url: "/api/AuthorityRvdm/WorkItems", headers: { authorization: `Bearer ${token}` } }),
    ];
    for (const response of responses) {
      assert.equal(response.statusCode, 503, response.body);
      assert.ok(Number(response.headers["retry-after"]) > 0);
      assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
      assert.doesNotMatch(response.body, /select|insert|ECONN|5432|postgres|search_path|terminated/i);
    }
  });

  test("once the database is back the same store works again, and the cut items were never stored", async () => {
    await relay.start();
    await store.ping();
    const outcome = await store.addWorkItem(item(61, "back"));
    assert.equal(outcome.kind, "created");
    const stored = (await store.listWorkItems(61, { limit: 10 })).map((i) => i.customerReference);
    assert.deepEqual(stored, ["back"]);
  });
});
