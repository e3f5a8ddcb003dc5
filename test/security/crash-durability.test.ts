/**
 * Crash durability on every store (SPEC §4: "a 200 means the item is durably stored"): the real
 * server is SIGKILLed under concurrent load; after a restart every acknowledged item is there,
 * and clients retrying with the same Idempotency-Key create no duplicate.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends } from "../helpers/backends.ts";
import { startServer, type ServerProcess } from "../helpers/processes.ts";
import { addOverHttp, unanswered, type AddAttempt } from "../helpers/http-add.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const COMPANY = 1201;
const CLIENTS = 8;
/** SIGKILL once this many adds were acknowledged. */
const ACKS_BEFORE_KILL = 150;

async function listAll(server: ServerProcess, token: string): Promise<Array<{ workItemId: number; customerReference: string }>> {
  const items: Array<{ workItemId: number; customerReference: string }> = [];
  let cursor: string | null = null;
  do {
    const response = await fetch(`${server.baseUrl}/api/AuthorityRvdm/WorkItems?limit=200${cursor ? `&cursor=${cursor}` : ""}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    const page = (await response.json()) as { items: Array<{ workItemId: number; customerReference: string }>; nextCursor: string | null };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

for (const backend of await availableBackends()) {
  describe(`crash durability [${backend.name}]`, () => {
    test("SIGKILL under concurrent load loses no acknowledged item; retries create no duplicate", { timeout: HANG_TIMEOUT_MS }, async (t) => {
      const created = await backend.create();
      const setup = await openStore(created.location);
      const key = await createKey(setup, { companyId: COMPANY });
      await setup.close();
      const env = { DATABASE_URL: created.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, RATE_LIMIT_TENANT_RPS: "0" };
      let server = await startServer(env);
      try {
        const login = await fetch(`${server.baseUrl}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
        const { bearerToken } = (await login.json()) as { bearerToken: string };

        const attempts: AddAttempt[] = [];
        let sequence = 0;
        let acks = 0;
        let killed: Promise<void> | undefined;
        const victim = server;
        const client = async () => {
          for (;;) {
            const attempt = await addOverHttp(victim.baseUrl, bearerToken, `crash-${sequence++}`);
            attempts.push(attempt);
            if (unanswered(attempt)) return;
            assert.equal(attempt.status, 200, `before the crash every add succeeds (${attempt.key})`);
            if (++acks === ACKS_BEFORE_KILL) killed = victim.kill();
          }
        };
        await Promise.all(Array.from({ length: CLIENTS }, client));
        await killed;
        assert.equal(await victim.exited, null, "ended by the SIGKILL, not by itself");
        const acknowledged = attempts.filter((a) => a.status === 200);
        const lost = attempts.filter(unanswered);
        assert.ok(acknowledged.length >= ACKS_BEFORE_KILL);
        assert.ok(lost.length > 0, "some requests were in flight when the process died");
        t.diagnostic(`${acknowledged.length} adds acknowledged, ${lost.length} in flight at the SIGKILL`);

        server = await startServer(env);
        for (const a of acknowledged) {
          const response = await fetch(`${server.baseUrl}/api/AuthorityRvdm/WorkItem/${a.workItemId}`, { headers: { authorization: `Bearer ${bearerToken}` } });
          assert.equal(response.status, 200, `acknowledged item ${a.workItemId} (${a.key}) survived the crash`);
          assert.equal(((await response.json()) as { customerReference: string }).customerReference, a.key);
        }

        // Clients retry everything they sent, acknowledged or not, with the same key and body.
        for (const a of attempts) {
          const retry = await addOverHttp(server.baseUrl, bearerToken, a.key);
          assert.equal(retry.status, 200, `retry of ${a.key}`);
          if (a.status === 200) {
            assert.equal(retry.workItemId, a.workItemId, `${a.key} gets its first answer again`);
            assert.equal(retry.replayed, true);
          }
        }
        const items = await listAll(server, bearerToken);
        const references = items.map((item) => item.customerReference);
        assert.equal(new Set(references).size, references.length, "no item is stored twice");
        assert.deepEqual([...references].sort(), attempts.map((a) => a.key).sort(), "exactly one item per request sent");
      } finally {
        await server.kill();
        await created.cleanup();
      }
    });
  });
}
