/**
 * The PostgreSQL image (`npm run image -- --postgres`, SPEC §21), which compose and the manifests'
 * tests run beside the service: made from Debian's postgresql-15 with mmdebstrap, no image
 * registry. On a first start it makes its cluster with the user, password and database it is
 * given; it takes password sign-in over the network and refuses a wrong password; the service's
 * migrations run on it; a restart keeps the data; SIGTERM stops it with exit 0.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { freePort, REPO_ROOT, runCli } from "../helpers/processes.ts";
import { createPodmanStore, imageToolsMissing, run } from "../helpers/podman.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

const TAG = "work-item-api-postgres:test";
const PASSWORD = "a-password-for-the-test";

const missing = imageToolsMissing();

describe("the PostgreSQL image", { skip: missing ?? false, timeout: 30 * 60_000 }, () => {
  const store = createPodmanStore("postgres-image");
  before(async () => {
    const built = await run(process.execPath, ["--import", "tsx", `${REPO_ROOT}/scripts/image/build.ts`, "--postgres", ...store.storage, "--tag", TAG, "--json"], store.env);
    assert.equal(built.code, 0, built.stderr.slice(-4000));
  });
  after(() => store.remove());

  test("makes its cluster on a first start, signs in by password, runs the service's migrations, keeps its data, stops on SIGTERM", async () => {
    const port = await freePort();
    const url = (password: string) => `postgres://work_item_api:${password}@127.0.0.1:${port}/work_item_api`;
    const connect = async (password: string) => {
      const client = new pg.Client({ connectionString: url(password), connectionTimeoutMillis: 2_000 });
      await client.connect();
      return client;
    };
    const start = async () => {
      await store.podmanOk(["start", "wia-postgres"]);
      const client = await waitUntil("PostgreSQL to take connections", () => connect(PASSWORD).catch(() => undefined), HANG_TIMEOUT_MS, 200);
      await client.end();
    };
    await store.podmanOk([
      "create",
      "--name",
      "wia-postgres",
      "--env",
      `POSTGRES_PASSWORD=${PASSWORD}`,
      "--env",
      "POSTGRES_USER=work_item_api",
      "--env",
      "POSTGRES_DB=work_item_api",
      "--volume",
      "wia-postgres:/var/lib/postgresql/data",
      "--publish",
      `127.0.0.1:${port}:5432`,
      TAG,
    ]);
    await start();
    await assert.rejects(connect("not-the-password"), /password authentication failed/);

    const env = { DATABASE_URL: url(PASSWORD) };
    const migrated = await runCli(["db", "migrate", "--json"], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const applied = () => runCli(["db", "status", "--json"], env).then((status) => status.json<{ applied: unknown[]; pending: unknown[] }>());
    const before = await applied();
    assert.deepEqual(before.pending, []);

    await store.podmanOk(["stop", "--time", "10", "wia-postgres"]);
    assert.equal((await store.podmanOk(["inspect", "wia-postgres", "--format", "{{.State.ExitCode}}"])).trim(), "0", "SIGTERM: a clean shutdown");
    await start();
    assert.equal((await applied()).applied.length, before.applied.length, "the data outlives a restart");
    await store.podmanOk(["rm", "--force", "--time", "0", "wia-postgres"]);
  });
});
