/**
 * Two real ROLE=api processes on one PostgreSQL schema, started at the same moment (so their
 * migrations race), both with JWT_SECRET unset (so they must agree on the key stored in the
 * database). 500 concurrent adds for one company are spread over both, with a few idempotency
 * keys raced across them, while a watcher checks through SQL that the company never has two
 * Open batches. Afterwards every acknowledged item is stored exactly once, and a key revoked
 * through the CLI is refused by both processes within 5 seconds.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { availableBackends, POSTGRES_TEST_URL, postgresBackend, withPostgresAdmin } from "../helpers/backends.ts";
import { runCli, startServer, type ServerProcess } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const COMPANY_ID = 880;
const ADDS = 500;
const BATCH_MAX_ITEMS = 37;
const RACED_KEYS = 5;
const hasPostgres = (await availableBackends()).some((backend) => backend.name === "postgres");

describe("two API processes on one PostgreSQL database", { skip: !hasPostgres && "PostgreSQL is not available", timeout: HANG_TIMEOUT_MS }, () => {
  let location: Awaited<ReturnType<typeof postgresBackend.create>>;
  let schema: string;
  let servers: ServerProcess[] = [];
  let env: Record<string, string | undefined>;
  let key: { keyId: string; apiKey: string; secret: string };
  let token: string;

  before(async () => {
    location = await postgresBackend.create();
    schema = /search_path%3D(\w+)/.exec(location.databaseUrl)![1]!;
    env = {
      DATABASE_URL: location.databaseUrl,
      ROLE: "api",
      JWT_SECRET: undefined,
      BATCH_MAX_ITEMS: String(BATCH_MAX_ITEMS),
      RATE_LIMIT_TENANT_RPS: "0",
      LOGIN_FAILURES_PER_MINUTE: "0",
    };
    servers = await Promise.all([startServer(env, { launcher: "npm" }), startServer(env, { launcher: "npm" })]);
    const created = await runCli(["keys", "create", "--company-id", String(COMPANY_ID), "--json"], env, { launcher: "npm" });
    assert.equal(created.code, 0, created.stderr);
    key = created.json();
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await location.cleanup();
  });

  const call = (server: ServerProcess, path: string, init: RequestInit = {}) =>
    fetch(`${server.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
  const sql = <T extends Record<string, unknown>>(text: string) => withPostgresAdmin(async (client) => (await client.query<T>(text)).rows);

  test("a token issued by one process is accepted by the other (one shared signing key)", async () => {
    const login = await fetch(`${servers[0]!.baseUrl}/api/Login/Authenticate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }),
    });
    assert.equal(login.status, 200);
    token = ((await login.json()) as { bearerToken: string }).bearerToken;
    for (const server of servers) assert.equal((await call(server, "/api/AuthorityRvdm/Ping")).status, 200);
    // Each server key once, made when the first process started, whichever it was.
    assert.deepEqual(await sql<{ name: string }>(`SELECT name FROM ${schema}.signing_secrets ORDER BY name`), [{ name: "data-encryption-key" }, { name: "jwt-hs256" }]);
  });

  test(`${ADDS} concurrent adds over both: each acknowledged item stored once, never two Open batches`, async () => {
    // The watcher runs inside PostgreSQL, so it keeps looking however busy this process gets:
    // every few milliseconds until all items are in, it counts the company's Open batches.
    const watcherClient = new pg.Client(POSTGRES_TEST_URL);
    await watcherClient.connect();
    await watcherClient.query(`
        CREATE FUNCTION pg_temp.watch_open_batches(expected_items int, max_seconds float)
        RETURNS TABLE (checks int, max_open int, max_batches int) LANGUAGE plpgsql AS $$
        DECLARE deadline timestamptz := clock_timestamp() + make_interval(secs => max_seconds); open_now int; batches_now int; items_now int;
        BEGIN
          checks := 0; max_open := 0; max_batches := 0;
          LOOP
            SELECT COUNT(*) FILTER (WHERE status = 'Open'), COUNT(*) INTO open_now, batches_now FROM ${schema}.work_batches WHERE company_id = ${COMPANY_ID};
            SELECT COUNT(*) INTO items_now FROM ${schema}.work_items WHERE company_id = ${COMPANY_ID};
            checks := checks + 1; max_open := GREATEST(max_open, open_now); max_batches := GREATEST(max_batches, batches_now);
            EXIT WHEN items_now >= expected_items OR clock_timestamp() > deadline;
            PERFORM pg_sleep(0.002);
          END LOOP;
          RETURN NEXT;
        END $$`);
    // Sent now, before the first add; it answers once every item is in.
    const watcher = watcherClient
      .query<{ checks: number; max_open: number; max_batches: number }>("SELECT * FROM pg_temp.watch_open_batches($1, 30)", [ADDS + RACED_KEYS])
      .then(({ rows }) => rows[0]!)
      .finally(() => watcherClient.end());

    const started = Date.now();
    const plain = Array.from({ length: ADDS }, (_, i) =>
      call(servers[i % 2]!, "/api/AuthorityRvdm/AddWorkItemCreate", { method: "POST", body: JSON.stringify(validWorkItem({ customerReference: `mp-${i}` })) }),
    );
    // Each raced key is sent twice to each process with the very same body.
    const racedBodies = Array.from({ length: RACED_KEYS }, (_, k) => JSON.stringify(validWorkItem({ customerReference: `raced-${k}` })));
    const raced = racedBodies.flatMap((body, k) =>
      [0, 1, 0, 1].map((s) => call(servers[s]!, "/api/AuthorityRvdm/AddWorkItemCreate", { method: "POST", body, headers: { "idempotency-key": `raced-${k}` } })),
    );
    const plainResponses = await Promise.all(plain);
    const racedResponses = await Promise.all(raced);
    const elapsed = Date.now() - started;
    const watched = await watcher;
    process.stderr.write(`multi-process: ${ADDS} adds + ${raced.length} raced over 2 processes in ${elapsed} ms; ${watched.checks} SQL checks during the run\n`);

    assert.deepEqual([...new Set(plainResponses.map((r) => r.status))], [200], "every plain add was acknowledged");
    const acknowledged = (await Promise.all(plainResponses.map((r) => r.json()))) as Array<{ workBatchId: number; workItemId: number }>;
    assert.equal(new Set(acknowledged.map((k) => k.workItemId)).size, ADDS);
    assert.equal(watched.max_open, 1, "the company never had two Open batches");
    assert.ok(watched.checks > 10 && watched.max_batches > 2, `the watcher looked ${watched.checks} times while batches rolled over`);

    const stored = await sql<{ work_item_id: string; work_batch_id: string; customer_reference: string }>(
      `SELECT work_item_id, work_batch_id, customer_reference FROM ${schema}.work_items WHERE company_id = ${COMPANY_ID}`,
    );
    const byId = new Map(stored.map((row) => [Number(row.work_item_id), row]));
    acknowledged.forEach((ack, i) => {
      const row = byId.get(ack.workItemId);
      assert.equal(row?.customer_reference, `mp-${i}`, `acknowledged item ${ack.workItemId} is stored as sent`);
      assert.equal(Number(row?.work_batch_id), ack.workBatchId);
    });
    const perReference = new Map<string, number>();
    for (const row of stored) perReference.set(row.customer_reference, (perReference.get(row.customer_reference) ?? 0) + 1);
    assert.ok([...perReference.values()].every((n) => n === 1), "no item is stored twice");
    assert.equal(stored.length, ADDS + RACED_KEYS, "nothing else was stored");

    for (let k = 0; k < RACED_KEYS; k++) {
      const responses = racedResponses.slice(k * 4, k * 4 + 4);
      assert.ok(responses.every((r) => r.status === 200 || r.status === 409), responses.map((r) => r.status).join());
      const ok = (await Promise.all(responses.filter((r) => r.status === 200).map((r) => r.json()))) as Array<{ workItemId: number }>;
      assert.ok(ok.length >= 2, "at least one answer per process");
      assert.equal(new Set(ok.map((b) => b.workItemId)).size, 1, `raced-${k}: one item for every answer`);
      assert.equal(perReference.get(`raced-${k}`), 1);
    }

    const batches = await sql<{ status: string; item_count: number; items: number }>(
      `SELECT b.status, b.item_count, (SELECT COUNT(*)::int FROM ${schema}.work_items i WHERE i.company_id = b.company_id AND i.work_batch_id = b.work_batch_id) AS items
         FROM ${schema}.work_batches b WHERE b.company_id = ${COMPANY_ID}`,
    );
    assert.equal(batches.filter((b) => b.status === "Open").length, 1);
    assert.ok(batches.every((b) => b.items === b.item_count), "item_count matches the rows");
    assert.ok(batches.filter((b) => b.status === "Closed").every((b) => b.items === BATCH_MAX_ITEMS), "every closed batch is exactly full");
    assert.equal(batches.length, Math.ceil((ADDS + RACED_KEYS) / BATCH_MAX_ITEMS));
  });

  test("a key revoked through the CLI is refused by both processes within 5 seconds", async () => {
    for (const server of servers) assert.equal((await call(server, "/api/AuthorityRvdm/Ping")).status, 200);
    const revoke = await runCli(["keys", "revoke", "--key-id", key.keyId, "--json"], env, { launcher: "npm" });
    assert.equal(revoke.code, 0, revoke.stderr);
    const revokedAt = Date.now();
    const refusedAfter = await Promise.all(
      servers.map(async (server) => {
        while (Date.now() - revokedAt < 6000) {
          if ((await call(server, "/api/AuthorityRvdm/Ping")).status === 401) return Date.now() - revokedAt;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return Infinity;
      }),
    );
    assert.ok(refusedAfter.every((ms) => ms <= 5000), `refused after ${refusedAfter.join(" and ")} ms`);
  });
});
