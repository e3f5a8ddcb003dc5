/**
 * End to end, per backend, the way a user runs the service: the real server process (`npm
 * start`, JWT_SECRET unset so the generated shared key is used), keys made with the real CLI as
 * a separate process, every route over loopback HTTP; then a restart (items and tokens survive)
 * and a revocation through the CLI (the token is refused within 5 s).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { runCli, startServer, type ServerProcess } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const COMPANY_ID = 7701;

for (const backend of await availableBackends()) {
  describe(`server process end to end [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let location: Awaited<ReturnType<typeof backend.create>>;
    let env: Record<string, string | undefined>;
    let server: ServerProcess | undefined;
    let key: { keyId: string; apiKey: string; secret: string; companyId: number };
    let token: string;
    let added: { workBatchId: number; workItemId: number };

    before(async () => {
      location = await backend.create();
      env = { DATABASE_URL: location.databaseUrl, JWT_SECRET: undefined, RATE_LIMIT_TENANT_RPS: "0" };
      server = await startServer(env, { launcher: "npm" });
    });
    after(async () => {
      await server?.stop();
      await location.cleanup();
    });

    const call = (path: string, init: RequestInit & { token?: string } = {}) =>
      fetch(`${server!.baseUrl}${path}`, {
        ...init,
        headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body ? { "content-type": "application/json" } : {}), ...init.headers },
      });

    test("the CLI, as its own process, creates a key for a new company", async () => {
      const result = await runCli(["keys", "create", "--company-id", String(COMPANY_ID), "--json"], env, { launcher: "npm" });
      assert.equal(result.code, 0, result.stderr);
      key = result.json();
      assert.equal(key.companyId, COMPANY_ID);
      assert.match(key.apiKey, new RegExp(`^wia_${COMPANY_ID}_[0-9a-f]{16}$`));
      assert.match(key.secret, /^wis_/);
    });

    test("login, both pings, add, WorkItem, WorkBatch, WorkItems over HTTP", async () => {
      const login = await call("/api/Login/Authenticate", { method: "POST", body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
      assert.equal(login.status, 200);
      const issued = (await login.json()) as { bearerToken: string; expires: string };
      token = issued.bearerToken;
      assert.ok(Date.parse(issued.expires) > Date.now() + 19 * 60_000);

      for (const path of ["/api/AuthorityRvdm/Ping", "/api/VlmMad/Ping"]) {
        const pong = await call(path, { token });
        assert.equal(pong.status, 200, path);
        assert.match(await pong.text(), /^Pong --> \w+day, \d{1,2} \w+ \d{4} \d\d:\d\d:\d\d$/);
      }
      assert.equal((await call("/api/AuthorityRvdm/Ping")).status, 401);

      const body = JSON.stringify(validWorkItem({ customerReference: "e2e-1" }));
      const add = await call("/api/AuthorityRvdm/AddWorkItemCreate", { method: "POST", token, headers: { "idempotency-key": "e2e-1" }, body });
      assert.equal(add.status, 200);
      added = (await add.json()) as typeof added;
      const replay = await call("/api/AuthorityRvdm/AddWorkItemCreate", { method: "POST", token, headers: { "idempotency-key": "e2e-1" }, body });
      assert.equal(replay.headers.get("idempotency-replayed"), "true");
      assert.deepEqual(await replay.json(), added);

      const item = (await (await call(`/api/AuthorityRvdm/WorkItem/${added.workItemId}`, { token })).json()) as Record<string, unknown>;
      assert.equal(item.status, "New");
      assert.equal(item.customerReference, "e2e-1");
      const batch = (await (await call(`/api/AuthorityRvdm/WorkBatch/${added.workBatchId}`, { token })).json()) as { status: string; counts: { new: number } };
      assert.deepEqual([batch.status, batch.counts.new], ["Open", 1]);
      const list = (await (await call("/api/AuthorityRvdm/WorkItems?limit=10", { token })).json()) as { items: Array<{ workItemId: number }> };
      assert.deepEqual(list.items.map((i) => i.workItemId), [added.workItemId]);
      assert.equal((await call("/api/AuthorityRvdm/WorkItem/999999", { token })).status, 404);
    });

    test("healthz, readyz, openapi.json and docs answer without a token", async () => {
      assert.equal((await call("/healthz")).status, 200);
      assert.deepEqual(await (await call("/readyz")).json(), { status: "ready" });
      const openapi = (await (await call("/openapi.json")).json()) as { openapi: string; paths: Record<string, unknown> };
      assert.equal(openapi.openapi, "3.1.0");
      assert.ok(openapi.paths["/api/AuthorityRvdm/AddWorkItemCreate"]);
      const docs = await call("/docs");
      assert.equal(docs.status, 200);
      assert.match(await docs.text(), /<html/i);
    });

    test("after a restart, earlier items are there and an earlier token still works", async () => {
      const stopped = server!.stop();
      assert.equal((await stopped).graceful, true, "SIGTERM shuts the whole process group down in time");
      assert.match(server!.output(), /"msg":"shutting down"/);
      server = await startServer(env, { launcher: "npm" });
      const item = await call(`/api/AuthorityRvdm/WorkItem/${added.workItemId}`, { token });
      assert.equal(item.status, 200, "the generated signing key survived the restart");
      assert.equal(((await item.json()) as { customerReference: string }).customerReference, "e2e-1");
      const list = (await (await call("/api/AuthorityRvdm/WorkItems", { token })).json()) as { items: unknown[] };
      assert.equal(list.items.length, 1);
    });

    test("a key revoked with the CLI is refused within 5 seconds", async () => {
      assert.equal((await call("/api/AuthorityRvdm/Ping", { token })).status, 200);
      const revoke = await runCli(["keys", "revoke", "--key-id", key.keyId, "--json"], env, { launcher: "npm" });
      assert.equal(revoke.code, 0, revoke.stderr);
      assert.ok(revoke.json<{ revokedAt: string | null }>().revokedAt);
      const revokedAt = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 6000) {
        status = (await call("/api/AuthorityRvdm/Ping", { token })).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 401);
      assert.ok(Date.now() - revokedAt <= 5000, `refused after ${Date.now() - revokedAt} ms`);
      const login = await call("/api/Login/Authenticate", { method: "POST", body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
      assert.equal(login.status, 401);
    });
  });
}
