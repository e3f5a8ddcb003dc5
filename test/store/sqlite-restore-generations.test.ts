/**
 * Restores that must never make the authority take a new item for an old one (SPEC §24), black
 * box with real processes and the simulated authority:
 * - the same copy restored twice, with items added and filed after each restore: the items
 *   added after the second restore reuse the ids of those added after the first, and are still
 *   filed as themselves (the simulator answers no replay for a new item);
 * - a copy of another deployment: refused, naming both deployments, changing nothing; restored
 *   with --from-another-deployment, it takes a new deployment id, and its unfiled item is filed
 *   as itself, not answered with this deployment's item of the same id.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { startAuthoritySim, type AuthoritySim } from "../../src/authority-sim/server.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { fileEverything, signIn } from "../helpers/filing-by-process.ts";
import { createKeyWithCli, runCli, startServer, stopAll, type Env } from "../helpers/processes.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

const COMPANY = 2401;

interface Deployment {
  env: Env;
  store: string;
  key: { apiKey: string; secret: string };
  cleanup(): Promise<void>;
}

async function newDeployment(sim: AuthoritySim): Promise<Deployment> {
  const db = await sqliteBackend.create();
  if (db.location.kind !== "sqlite") throw new Error("a SQLite location");
  const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, AUTHORITY_URL: sim.url, RATE_LIMIT_TENANT_RPS: "0" };
  return { env, store: db.location.path, key: await createKeyWithCli(db.databaseUrl, COMPANY), cleanup: db.cleanup };
}

/** Adds one item per reference through an API process, then stops it. */
async function addThroughApi(deployment: Deployment, references: string[]): Promise<number[]> {
  const api = await startServer({ ...deployment.env, ROLE: "api" });
  const add = await signIn(api.baseUrl, deployment.key);
  const ids: number[] = [];
  for (const reference of references) ids.push(await add(reference));
  assert.equal((await api.stop()).code, 0);
  return ids;
}

interface Restored {
  deploymentId: string;
  generation: number;
  generationId: string;
  copiedFromDeployment: string | null;
}

async function restore(deployment: Deployment, copy: string, ...flags: string[]): Promise<Restored> {
  const restored = await runCli(["db", "restore", copy, ...flags, "--json"], deployment.env);
  assert.equal(restored.code, 0, restored.stderr);
  return restored.json<Restored>();
}

async function backup(deployment: Deployment, file: string): Promise<void> {
  const taken = await runCli(["db", "backup", file, "--json"], deployment.env);
  assert.equal(taken.code, 0, taken.stderr);
}

test("the same copy restored twice: items added after each restore are filed as themselves", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, latencyMs: 0, decisionDelayMs: 0 });
  const deployment = await newDeployment(sim);
  const folder = mkdtempSync(join(tmpdir(), "wia-restore-twice-"));
  try {
    const inCopy = await addThroughApi(deployment, ["r-1", "r-2", "r-3"]);
    const copy = join(folder, "copy.db");
    await backup(deployment, copy);

    const first = await restore(deployment, copy);
    const afterFirst = await addThroughApi(deployment, ["first-4", "first-5"]);
    const firstLife = await fileEverything(deployment.env, deployment.store, 5);

    const second = await restore(deployment, copy);
    const afterSecond = await addThroughApi(deployment, ["second-4", "second-5"]);
    assert.deepEqual(afterSecond, afterFirst, "the id sequence went back to the same ids twice: the trap is set");
    const secondLife = await fileEverything(deployment.env, deployment.store, 5);

    assert.equal(second.deploymentId, first.deploymentId, "a copy of this deployment keeps its deployment");
    assert.notEqual(second.generationId, first.generationId, "each restore makes a generation the store never had");
    for (const id of afterSecond) {
      const now = secondLife.get(id)!;
      const then = firstLife.get(id)!;
      assert.notEqual(now.idempotencyKey, then.idempotencyKey, `item ${id}: a key the authority has not seen`);
      assert.notEqual(now.applicationNumber, then.applicationNumber, `item ${id} is filed as itself, not as the item lost with the second restore`);
    }
    const stats = sim.stats();
    for (const id of afterSecond) assert.equal(stats.keys[secondLife.get(id)!.idempotencyKey]!.submits, 1, `item ${id}: one submit, no replay`);
    for (const id of inCopy) assert.equal(secondLife.get(id)!.applicationNumber, firstLife.get(id)!.applicationNumber, `item ${id} of the copy keeps its application`);
    assert.equal(stats.registrations, 7, "three of the copy, two after each restore; none twice");
  } finally {
    await stopAll();
    await sim.close();
    rmSync(folder, { recursive: true, force: true });
    await deployment.cleanup();
  }
});

test("a copy of another deployment: refused naming both, or restored as meant with a new deployment id and filed as itself", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, latencyMs: 0, decisionDelayMs: 0 });
  const here = await newDeployment(sim);
  const other = await newDeployment(sim);
  const folder = mkdtempSync(join(tmpdir(), "wia-restore-foreign-"));
  try {
    const [hereItem] = await addThroughApi(here, ["here-1"]);
    const hereFiled = await fileEverything(here.env, here.store, 1);
    const [otherItem] = await addThroughApi(other, ["other-1"]);
    assert.equal(otherItem, hereItem, "both deployments count ids alike");
    const copy = join(folder, "other.db");
    await backup(other, copy);

    const status = async (deployment: Deployment) => (await runCli(["db", "status", "--json"], deployment.env)).json<{ deploymentId: string }>().deploymentId;
    const [hereId, otherId] = [await status(here), await status(other)];
    assert.notEqual(hereId, otherId);

    const before = readFileSync(here.store);
    const refused = await runCli(["db", "restore", copy], here.env);
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
    assert.ok(refused.stderr.includes(otherId) && refused.stderr.includes(hereId), `names both deployments: ${refused.stderr}`);
    assert.match(refused.stderr, /--from-another-deployment/);
    assert.deepEqual(readFileSync(here.store), before, "nothing was changed");

    const restored = await restore(here, copy, "--from-another-deployment");
    assert.equal(restored.copiedFromDeployment, otherId);
    assert.ok(![hereId, otherId].includes(restored.deploymentId), "the restored store takes a new deployment id");
    assert.equal(await status(here), restored.deploymentId);

    const filed = await fileEverything(here.env, here.store, 1);
    const item = filed.get(otherItem!)!;
    assert.notEqual(item.idempotencyKey, hereFiled.get(hereItem!)!.idempotencyKey);
    assert.notEqual(item.applicationNumber, hereFiled.get(hereItem!)!.applicationNumber, "the other deployment's item is filed as itself");
    assert.equal(sim.stats().keys[item.idempotencyKey]!.submits, 1);
  } finally {
    await stopAll();
    await sim.close();
    rmSync(folder, { recursive: true, force: true });
    await here.cleanup();
    await other.cleanup();
  }
});
