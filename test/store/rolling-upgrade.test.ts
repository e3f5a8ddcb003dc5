/**
 * A rolling upgrade on PostgreSQL (SPEC §18), as docs/operations.md says to do it, with the
 * previous release's own code (releases.json; checked out and installed once per machine):
 * 1. the previous release's `api` and `worker` run, and make the schema theirs;
 * 2. `db migrate` of this version runs beside them, and they go on against the new schema;
 * 3. this version's `api` and `worker` start beside them, and adds go to both APIs;
 * 4. the previous release's processes stop, and this version's go on alone.
 * Every item is filed exactly once (one submit, one application, one registration) and reported
 * once (one `workitem.succeeded` webhook), whichever release took it in or filed it.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { availableBackends, queryRows } from "../helpers/backends.ts";
import { installRelease, previousRelease } from "../helpers/previous-release.ts";
import { bearerTokenFrom, createKeyWithCli, runCli, startServer, stopAll, type ServerProcess } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { WEBHOOK_TEST_ENV } from "../helpers/webhook-harness.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

after(() => stopAll());

const COMPANY = 1903;

test("rolling upgrade on PostgreSQL: the previous release's api and worker beside this version's; every item filed once and reported once", { timeout: HANG_TIMEOUT_MS }, async (t) => {
  const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");
  if (!postgres) return t.skip("no PostgreSQL here");
  const release = await installRelease(previousRelease(), (line) => t.diagnostic(line));
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, latencyMs: 5, decisionDelayMs: 0 });
  const receiver = await startReceiver(() => 204);
  const db = await postgres.create();
  try {
    const env = {
      DATABASE_URL: db.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      AUTHORITY_URL: sim.url,
      BOT_SCHEDULE: "* * * * * *",
      RATE_LIMIT_TENANT_RPS: "0",
      ...WEBHOOK_TEST_ENV,
    };
    const previous = { cwd: release.root, launcher: "tsx" as const };
    const oldApi = await startServer({ ...env, ROLE: "api" }, previous);
    const oldWorker = await startServer({ ...env, ROLE: "worker" }, previous);
    const key = await createKeyWithCli(db.databaseUrl, COMPANY);

    const added: number[] = [];
    const adderFor = async (api: ServerProcess) => {
      const bearerToken = await bearerTokenFrom(api.baseUrl, key);
      return async (count: number) => {
        for (let i = 0; i < count; i++) {
          const response = await fetch(`${api.baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
            method: "POST",
            headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" },
            body: JSON.stringify(validWorkItem({ customerReference: `rolling-${added.length}`, webhookUrl: `${receiver.url}/hooks` })),
          });
          assert.equal(response.status, 200, await response.clone().text());
          added.push(((await response.json()) as { workItemId: number }).workItemId);
        }
      };
    };
    const allFiled = (what: string) =>
      waitUntil(
        what,
        async () => {
          const rows = await queryRows<{ status: string }>(db.location, "SELECT status FROM work_items WHERE company_id = $1", [COMPANY]);
          return rows.length === added.length && rows.every((row) => row.status === "Successful");
        },
        undefined,
        200,
      );

    // 1. The previous release alone, on its own schema.
    const addToOld = await adderFor(oldApi);
    await addToOld(8);
    await allFiled("the previous release's worker to file its items");

    // 2. This version's migration, beside the running previous release.
    const migrated = await runCli(["db", "migrate", "--json"], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const { status } = migrated.json<{ status: { pending: unknown[]; applied: Array<{ version: number }> } }>();
    assert.deepEqual(status.pending, []);
    assert.ok(status.applied.some((migration) => migration.version > release.lastMigration), "the schema is now ahead of the previous release");
    await addToOld(8);
    await allFiled("the previous release to go on against the new schema");

    // 3. Both releases side by side.
    const current = { ...env, MIGRATE_ON_START: "false" };
    const newApi = await startServer({ ...current, ROLE: "api" });
    const newWorker = await startServer({ ...current, ROLE: "worker" });
    const addToNew = await adderFor(newApi);
    for (let round = 0; round < 8; round++) {
      await addToOld(1);
      await addToNew(1);
    }
    await allFiled("both releases to file the items of both APIs");

    // 4. The previous release stops; this version goes on alone.
    assert.equal((await oldApi.stop()).code, 0);
    assert.equal((await oldWorker.stop()).code, 0);
    await addToNew(8);
    await allFiled("this version to file alone");

    const stats = sim.stats();
    assert.equal(added.length, 40);
    assert.equal(stats.registrations, 40, "forty registrations for forty items");
    const items = await queryRows<{ work_item_id: string; application_number: string }>(db.location, "SELECT work_item_id, application_number FROM work_items WHERE company_id = $1", [COMPANY]);
    for (const item of items) {
      const perKey = stats.keys[String(item.work_item_id)];
      assert.equal(perKey?.submits, 1, `item ${item.work_item_id} submitted once`);
      assert.equal(perKey.applicationNumber, item.application_number, `item ${item.work_item_id}: the one application, in the store`);
    }

    const succeeded = () =>
      receiver.requests
        .map((request) => JSON.parse(request.body) as { type: string; data: { workItemId: number } })
        .filter((event) => event.type === "workitem.succeeded");
    await waitUntil("a succeeded webhook for every item", () => new Set(succeeded().map((event) => event.data.workItemId)).size === 40, undefined, 100);
    // Deliveries still due would show here as a second one; give them a moment to come.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const perItem = new Map<number, number>();
    for (const event of succeeded()) perItem.set(event.data.workItemId, (perItem.get(event.data.workItemId) ?? 0) + 1);
    assert.deepEqual([...perItem.entries()].filter(([, count]) => count !== 1), [], "each item reported once");

    await newApi.stop();
    await newWorker.stop();
  } finally {
    await stopAll();
    await receiver.close();
    await sim.close();
    await db.cleanup();
  }
});
