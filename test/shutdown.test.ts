/**
 * Graceful shutdown: the coordinator's phases and deadline, and the real process on SIGTERM —
 * in-flight requests finish, new connections are refused, the process exits 0 in bounded time,
 * and what was acknowledged is stored.
 */
import assert from "node:assert/strict";
import { connect, type AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { createKey } from "../src/admin/admin.ts";
import { createLogger } from "../src/logger.ts";
import { Shutdown } from "../src/shutdown.ts";
import { openStore } from "../src/store/open-store.ts";
import { availableBackends } from "./helpers/backends.ts";
import { head, openRaw, parseResponse } from "./helpers/raw-http.ts";
import { startServer } from "./helpers/processes.ts";
import { TEST_JWT_SECRET, createTestApp, validWorkItem } from "./helpers/test-app.ts";

const ADD = "/api/AuthorityRvdm/AddWorkItemCreate";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const silent = createLogger({ logLevel: "silent" });

describe("Shutdown coordinator", () => {
  test("drains first, all at once, then releases; every hook finished means a clean exit", async () => {
    const shutdown = new Shutdown(silent, 2000);
    const events: string[] = [];
    const hook = (name: string, ms: number) => async () => {
      events.push(`${name}:start`);
      await sleep(ms);
      events.push(`${name}:end`);
    };
    shutdown.onRelease("store", hook("store", 1));
    // http's drain ends only after bot's: that can happen only if both drains run at once
    // (one after the other, http would wait for bot until the deadline).
    let botDrained!: () => void;
    const botDone = new Promise<void>((resolve) => (botDrained = resolve));
    shutdown.onDrain("http", async () => {
      events.push("http:start");
      await botDone;
      events.push("http:end");
    });
    shutdown.onDrain("bot", async () => {
      await hook("bot", 10)();
      botDrained();
    });
    assert.equal(await shutdown.run("test"), true);
    assert.deepEqual(events, ["http:start", "bot:start", "bot:end", "http:end", "store:start", "store:end"]);
    assert.equal(await shutdown.run("again"), true, "a second run is the same run");
  });

  test("a hook that never finishes is abandoned at the deadline, and the rest still run", async () => {
    const shutdown = new Shutdown(silent, 1000);
    let released = false;
    shutdown.onDrain("stuck", () => new Promise(() => {}));
    shutdown.onDrain("failing", async () => {
      throw new Error("boom");
    });
    shutdown.onRelease("store", async () => {
      released = true;
    });
    const startedAt = Date.now();
    assert.equal(await shutdown.run("test"), false);
    assert.ok(Date.now() - startedAt < 1500, `took ${Date.now() - startedAt} ms`);
    assert.equal(released, true);
  });
});

for (const backend of await availableBackends()) {
  describe(`draining app [${backend.name}]`, () => {
    test("a request arriving while the app closes gets a 503 problem with Connection: close", async () => {
      const t = await createTestApp(backend);
      const tenant = await t.tenant(901);
      await t.app.listen({ port: 0, host: "127.0.0.1" });
      const port = (t.app.server.address() as AddressInfo).port;
      const body = JSON.stringify(validWorkItem());
      // An in-flight request keeps the close waiting; a second client is half-way through its
      // request head when the close begins, so its request is routed while the app drains.
      const slow = openRaw(port, head("POST", ADD, { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${tenant.token}` }) + body.slice(0, 10));
      const late = openRaw(port, `GET /api/AuthorityRvdm/Ping HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${tenant.token}\r\n`);
      await sleep(100);
      const closing = t.app.close();
      await sleep(50);
      late.socket.write("\r\n");
      const refused = await late.response;
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.connection, "close");
      assert.equal(refused.headers["retry-after"], "1");
      assert.equal((JSON.parse(refused.body) as { type: string }).type, "urn:work-item-api:problem:shutting-down");
      slow.socket.write(body.slice(10));
      const finished = await slow.response;
      assert.equal(finished.status, 200, "the in-flight request still finishes");
      assert.equal(finished.headers.connection, "close");
      await closing;
      await t.close().catch(() => {});
    });
  });

  describe(`SIGTERM on the real process [${backend.name}]`, () => {
    test("in-flight requests finish, new connections are refused, exit 0 in bounded time, nothing acknowledged is lost", async () => {
      const created = await backend.create();
      const setup = await openStore(created.location);
      const key = await createKey(setup, { companyId: 902 });
      await setup.close();
      const server = await startServer({ DATABASE_URL: created.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, SHUTDOWN_TIMEOUT_MS: "10000" });
      try {
        const login = await fetch(`${server.baseUrl}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
        const { bearerToken } = (await login.json()) as { bearerToken: string };

        // Five clients that trickle their bodies: in flight when the signal arrives.
        const bodies = Array.from({ length: 5 }, (_, i) => JSON.stringify(validWorkItem({ customerReference: `SLOW-${i}` })));
        const slow = bodies.map((body) =>
          openRaw(server.port, head("POST", ADD, { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${bearerToken}` }) + body.slice(0, 20), 15_000),
        );
        await sleep(300);
        const signalledAt = Date.now();
        process.kill(server.pid, "SIGTERM");
        await sleep(300);

        const refused = await new Promise<string>((resolve) => {
          const socket = connect({ host: "127.0.0.1", port: server.port });
          socket.once("connect", () => {
            socket.write(head("GET", "/healthz", {}));
            socket.once("data", (data) => {
              socket.destroy();
              resolve(`answered ${parseResponse(data)?.status}`);
            });
            socket.once("close", () => resolve("closed"));
          });
          socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
        });
        assert.equal(refused, "ECONNREFUSED", "no new connections after SIGTERM");

        bodies.forEach((body, i) => slow[i]!.socket.write(body.slice(20)));
        const answers = await Promise.all(slow.map((exchange) => exchange.response));
        for (const answer of answers) {
          assert.equal(answer.status, 200, answer.body);
          assert.equal(answer.headers.connection, "close");
        }
        const code = await server.exited;
        const exitMs = Date.now() - signalledAt;
        assert.equal(code, 0, server.output());
        assert.ok(exitMs < 10_000, `exited ${exitMs} ms after SIGTERM`);
        assert.match(server.output(), /"clean":true[^\n]*"msg":"shutdown finished"/);

        const check = await openStore(created.location);
        try {
          for (const answer of answers) {
            const { workItemId } = JSON.parse(answer.body) as { workItemId: number };
            assert.ok(await check.getWorkItem(902, workItemId), `item ${workItemId} is stored`);
          }
        } finally {
          await check.close();
        }
      } finally {
        await server.kill();
        await created.cleanup();
      }
    });
  });
}
