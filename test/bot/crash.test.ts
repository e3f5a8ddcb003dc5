/**
 * Crash tests with real processes, per backend (PostgreSQL in a fresh schema): a `bot run-once`
 * process is SIGKILLed while it submits, and another while it polls; while its claims' lease
 * lasts nobody else touches the items it held (the rest of the queue goes on); after it expires
 * a `ROLE=worker` process finishes the batch, and the simulator's per-key counts show every item
 * filed (one application, one registration) once. The capacity slots it held free themselves.
 *
 * Nothing here relies on a process finishing within the 8 s lease: the lease's end is read from
 * the store, and each held item's filing is compared with it afterwards. On a loaded machine the
 * next pass may start after the lease ended and take the items over itself, as it should.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { createKey } from "../../src/admin/admin.ts";
import { startAuthoritySim, type AuthoritySim } from "../../src/authority-sim/server.ts";
import { registrationOf, type WorkBatchView, type WorkItemView } from "../../src/domain/views.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { StoreLocation } from "../../src/config.ts";
import type { Store } from "../../src/store/store.ts";
import { availableBackends, queryRows, type Backend } from "../helpers/backends.ts";
import { runCli, startCli, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

interface Rig {
  sim: AuthoritySim;
  store: Store;
  location: StoreLocation;
  env: Record<string, string>;
  keys: Array<{ workBatchId: number; workItemId: number }>;
  batchView(): Promise<WorkBatchView>;
}

/** A simulator, a fresh store, an API process, and 12 items added through it into one batch. */
async function withRig(backend: Backend, sim: { latencyMs: number; decisionDelayMs: number }, extraEnv: Record<string, string>, body: (rig: Rig) => Promise<void>): Promise<void> {
  const authority = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, ...sim });
  const db = await backend.create();
  const store = await openStore(db.location);
  try {
    const tenant = await createKey(store, { companyId: 9 });
    const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, AUTHORITY_URL: authority.url, BOT_LEASE_SECONDS: "8", AUTHORITY_TIMEOUT_MS: "3000", AUTHORITY_MAX_CONCURRENCY: "2", ...extraEnv };
    const api = await startServer({ ...env, ROLE: "api" });
    const call = async <T>(method: string, path: string, body?: unknown, token?: string): Promise<T> => {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      assert.equal(response.status, 200, `${method} ${path}`);
      return (await response.json()) as T;
    };
    const { bearerToken } = await call<{ bearerToken: string }>("POST", "/api/Login/Authenticate", { apiKey: tenant.apiKey, secret: tenant.secret });
    const keys: Array<{ workBatchId: number; workItemId: number }> = [];
    for (let i = 0; i < 12; i++) keys.push(await call("POST", "/api/AuthorityRvdm/AddWorkItemCreate", validWorkItem({ customerReference: `crash-${i}` }), bearerToken));
    assert.ok(keys.every((k) => k.workBatchId === keys[0]!.workBatchId));
    await body({ sim: authority, store, location: db.location, env, keys, batchView: () => call<WorkBatchView>("GET", `/api/AuthorityRvdm/WorkBatch/${keys[0]!.workBatchId}`, undefined, bearerToken) });
  } finally {
    await stopAll();
    await store.close();
    await authority.close();
    await db.cleanup();
  }
}

/** The items the killed worker held (InProgress, or Submitted and being asked about). */
async function heldItems(rig: Rig, status: "InProgress" | "Submitted"): Promise<number[]> {
  const items = await rig.store.listWorkItems(9, { status, limit: 100 });
  return items.map((item) => item.workItemId).sort((a, b) => a - b);
}

/** When the claim on each InProgress item runs out (epoch ms), as the store holds it: a claimed item is due again then. */
async function leaseEnds(rig: Rig): Promise<Map<number, number>> {
  const rows = await queryRows<{ work_item_id: number; next_attempt_at: string | Date }>(
    rig.location,
    "SELECT work_item_id, next_attempt_at FROM work_items WHERE company_id = 9 AND status = 'InProgress'",
  );
  return new Map(rows.map((row) => [Number(row.work_item_id), new Date(row.next_attempt_at).getTime()]));
}

/**
 * Another pass runs and a ROLE=worker process finishes the batch and stops cleanly; nobody
 * filed an item the killed worker held before its lease (`held`, from leaseEnds) ran out.
 */
async function finishWithAnotherWorker(rig: Rig, held: Map<number, number>): Promise<WorkBatchView> {
  const next = await runCli(["bot", "run-once", "--json"], rig.env);
  assert.equal(next.code, 0, next.stderr);
  const inProgress = await heldItems(rig, "InProgress");
  assert.ok(inProgress.every((id) => held.has(id)), `the pass left no claim of its own InProgress: ${inProgress} (held: ${[...held.keys()]})`);
  const worker = await startServer({ ...rig.env, ROLE: "worker", BOT_SCHEDULE: "* * * * * *" });
  const done = await waitUntil(
    "the batch to complete",
    async () => {
      const batch = await rig.batchView();
      return batch.status === "Completed" ? batch : undefined;
    },
    undefined,
    200,
  );
  assert.equal((await worker.stop()).code, 0, "the worker shuts down cleanly on SIGTERM");
  assert.deepEqual(done.counts, { new: 0, inProgress: 0, submitted: 0, successful: 12, failed: 0, cancelled: 0, withdrawn: 0 });
  for (const [workItemId, leaseEnd] of held) {
    const submittedAt = ((await rig.store.getWorkItem(9, workItemId)) as WorkItemView).authority.submittedAt;
    assert.ok(
      submittedAt !== null && Date.parse(submittedAt) >= leaseEnd,
      `nobody touches the items the dead worker held while its lease holds: item ${workItemId} filed at ${submittedAt}, lease until ${new Date(leaseEnd).toISOString()}`,
    );
  }
  return done;
}

/** Each item was filed once: one application, one registration, and the store holds the authority's numbers. */
async function assertFiledOnce(rig: Rig): Promise<void> {
  const stats = rig.sim.stats();
  assert.equal(stats.registrations, 12, "twelve registrations for twelve items");
  for (const key of rig.keys) {
    const perKey = stats.keys[String(key.workItemId)];
    assert.ok(perKey?.applicationNumber && perKey.registrationNumber, `item ${key.workItemId} registered`);
    const item = (await rig.store.getWorkItem(9, key.workItemId)) as WorkItemView;
    assert.equal(item.status, "Successful");
    assert.equal(item.authority.applicationNumber, perKey.applicationNumber, "the one application the authority made for this key");
    assert.equal(registrationOf(item)?.registrationNumber, perKey.registrationNumber);
  }
}

for (const backend of await availableBackends()) {
  test(`[${backend.name}] killed between submit and recording the application number: resubmitted under the same key, one application each`, { timeout: HANG_TIMEOUT_MS }, () =>
    withRig(backend, { latencyMs: 400, decisionDelayMs: 0 }, {}, async (rig) => {
      const doomed = startCli(["bot", "run-once", "--json"], rig.env);
      await waitUntil("the first worker to be mid-batch", () => rig.sim.stats().requests >= 5, undefined, 5);
      await doomed.kill();
      assert.equal(await doomed.exited, null, "killed by signal");
      const afterKill = await rig.batchView();
      assert.equal(afterKill.status, "Processing");
      assert.ok(afterKill.counts.inProgress >= 1, "the dead worker left items InProgress, their submit sent but its answer not recorded");
      const held = await leaseEnds(rig);
      assert.ok(held.size <= 2, "it held at most one claim (AUTHORITY_MAX_CONCURRENCY items)");

      await finishWithAnotherWorker(rig, held);
      await assertFiledOnce(rig);
      assert.ok(
        Object.values(rig.sim.stats().keys).some((k) => k.submits >= 2),
        "an item in flight when the worker died was submitted again, and the authority answered with the same application",
      );
    }));

  test(`[${backend.name}] killed while polling: Submitted items are only asked about again, never submitted twice`, { timeout: HANG_TIMEOUT_MS }, () =>
    withRig(backend, { latencyMs: 150, decisionDelayMs: 2500 }, { BOT_POLL_SECONDS: "1" }, async (rig) => {
      const doomed = startCli(["bot", "run-once", "--json"], rig.env);
      await waitUntil(
        "the first worker to have filed every item and be polling",
        async () => rig.sim.stats().statusRequests >= 3 && (await heldItems(rig, "Submitted")).length === 12,
        undefined,
        5,
      );
      await doomed.kill();
      assert.equal(await doomed.exited, null, "killed by signal");
      const afterKill = await rig.batchView();
      assert.equal(afterKill.status, "Processing");
      assert.equal(afterKill.counts.submitted, 12, "every item was Submitted before the kill");

      await finishWithAnotherWorker(rig, new Map());
      await assertFiledOnce(rig);
      for (const [key, perKey] of Object.entries(rig.sim.stats().keys)) {
        assert.equal(perKey.submits, 1, `item ${key} submitted once`);
        assert.ok(perKey.statusRequests >= 1);
      }
    }));
}
