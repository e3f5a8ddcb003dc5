/**
 * PostgreSQL's backups are its own (SPEC §18, docs/operations.md): a `pg_dump` taken while the
 * service takes adds, restored with `pg_restore` into a new database, and the service started on
 * it. Every add answered before the dump began is there; new adds get new ids; and the restored
 * database is a new generation, so an id a lost item had cannot be answered with its application.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { availableBackends, POSTGRES_TEST_URL, queryRows, withPostgresAdmin } from "../helpers/backends.ts";
import { bearerTokenFrom, createKeyWithCli, runCli, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

const run = promisify(execFile);
const COMPANY = 1902;

/** The test database's URL with another database name, and a schema on the search path. */
const generationIdOf = async (location: { kind: "postgres"; url: string }) =>
  (await queryRows<{ generation_id: string }>(location, "SELECT generation_id FROM store_generation"))[0]!.generation_id;

function urlFor(database: string, schema?: string): string {
  const url = new URL(POSTGRES_TEST_URL);
  url.pathname = `/${database}`;
  // Spelled out: URLSearchParams writes a space as "+", which libpq does not read as one.
  return schema === undefined ? url.toString() : `${url.toString()}${url.search ? "&" : "?"}options=-c%20search_path%3D${schema}`;
}

test("a pg_dump taken during intake, restored twice into new databases: every earlier add is there, new adds get new ids and a generation no other had", { timeout: HANG_TIMEOUT_MS }, async (t) => {
  const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");
  if (!postgres) return t.skip("no PostgreSQL here");
  const source = await postgres.create();
  if (source.location.kind !== "postgres") throw new Error("a PostgreSQL location");
  const schema = /search_path%3D(\w+)/.exec(source.databaseUrl)![1]!;
  const restoredDatabases = ["a", "b"].map((copy) => `wia_restore_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString("hex")}_${copy}`);
  const folder = mkdtempSync(join(tmpdir(), "wia-pgdump-"));
  try {
    const env = { DATABASE_URL: source.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, RATE_LIMIT_TENANT_RPS: "0" };
    const key = await createKeyWithCli(source.databaseUrl, COMPANY);
    const api = await startServer({ ...env, ROLE: "api" });
    const bearerToken = await bearerTokenFrom(api.baseUrl, key);
    const answered: number[] = [];
    let sequence = 0;
    const addOne = async (baseUrl: string) => {
      const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json" },
        body: JSON.stringify(validWorkItem({ customerReference: `dump-${sequence++}` })),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { workItemId: number }).workItemId;
    };
    for (let i = 0; i < 100; i++) answered.push(await addOne(api.baseUrl));
    let adding = true;
    const adders = Array.from({ length: 4 }, async () => {
      while (adding) answered.push(await addOne(api.baseUrl));
    });
    const answeredBefore = [...answered];
    const dumpFile = join(folder, "store.dump");
    await run("pg_dump", ["--format=custom", `--schema=${schema}`, `--file=${dumpFile}`, `--dbname=${POSTGRES_TEST_URL}`]);
    adding = false;
    await Promise.all(adders);
    await api.stop();

    // The same dump restored twice: each restored database is a generation no other had (SPEC §24).
    const generationIds = new Set<string>([await generationIdOf(source.location)]);
    for (const restoredDatabase of restoredDatabases) {
      await withPostgresAdmin((client) => client.query(`CREATE DATABASE ${restoredDatabase}`));
      await run("pg_restore", ["--no-owner", `--dbname=${urlFor(restoredDatabase)}`, dumpFile]);
      const restoredUrl = urlFor(restoredDatabase, schema);
      const location = { kind: "postgres" as const, url: restoredUrl };
      const restoredIds = new Set((await queryRows<{ id: string }>(location, "SELECT work_item_id AS id FROM work_items")).map((row) => Number(row.id)));
      assert.deepEqual(answeredBefore.filter((id) => !restoredIds.has(id)), [], "every add answered before the dump began is in the restored database");

      const restoredEnv = { ...env, DATABASE_URL: restoredUrl };
      const status = await runCli(["db", "status", "--json"], restoredEnv);
      assert.equal(status.code, 0, status.stderr);
      assert.deepEqual(status.json<{ pending: unknown[] }>().pending, [], "the dump holds the whole schema");

      const restoredApi = await startServer({ ...restoredEnv, ROLE: "api" });
      const fresh = [await addOne(restoredApi.baseUrl), await addOne(restoredApi.baseUrl), await addOne(restoredApi.baseUrl)];
      await restoredApi.stop();
      for (const id of fresh) assert.ok(!restoredIds.has(id), `new add ${id} got an id of its own`);
      const generations = await queryRows<{ id: string; store_generation: number; generation_id: string }>(
        location,
        "SELECT work_item_id AS id, store_generation, generation_id FROM work_items",
      );
      const generationOf = new Map(generations.map((row) => [Number(row.id), row]));
      const sourceGenerationId = [...generationIds][0];
      assert.ok(
        answeredBefore.every((id) => generationOf.get(id)!.store_generation === 0 && generationOf.get(id)!.generation_id === sourceGenerationId),
        "the restored items keep their generation, so their keys",
      );
      assert.deepEqual(fresh.map((id) => Number(generationOf.get(id)!.store_generation)), [1, 1, 1], "items added on the restored database are of a new generation");
      const freshIds = new Set(fresh.map((id) => generationOf.get(id)!.generation_id));
      assert.equal(freshIds.size, 1);
      const [freshId] = freshIds;
      assert.ok(!generationIds.has(freshId!), `restored database ${restoredDatabase}: a generation id no other database had`);
      generationIds.add(freshId!);
    }
    const sourceGeneration = await queryRows<{ generation: number }>(source.location, "SELECT generation FROM store_generation");
    assert.equal(Number(sourceGeneration[0]!.generation), 0, "the database the dump was taken from is still generation 0");
  } finally {
    await stopAll();
    rmSync(folder, { recursive: true, force: true });
    for (const restoredDatabase of restoredDatabases) await withPostgresAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${restoredDatabase} WITH (FORCE)`));
    await source.cleanup();
  }
});
