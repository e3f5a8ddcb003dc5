/**
 * The image (SPEC §21), built by `npm run image` and run with podman, black box:
 * - reproducible: two builds in two empty container stores, with one SOURCE_DATE_EPOCH, give one
 *   image id (the digest of the configuration, which names every layer's digest);
 * - at most 250 MB; user 10001; OCI labels; tini as PID 1;
 * - run with a read-only root, a tmpfs /tmp and a volume: /readyz within 15 s; a key made with
 *   the CLI through the image; authenticate, add, read back; SIGTERM ends it with exit 0 within
 *   2 s; a new container on the same volume still has the item;
 * - on PostgreSQL too, and every module of the build imports in the image (nothing it needs was
 *   pruned from node_modules).
 * Runs under `npm run test:image`, not `npm test`: a cold build takes minutes.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Agent, fetch as undiciFetch } from "undici";
import { availableBackends } from "../helpers/backends.ts";
import { freePort, REPO_ROOT } from "../helpers/processes.ts";
import { createPodmanStore, imageToolsMissing, run, type PodmanStore } from "../helpers/podman.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { waitUntil } from "../helpers/waiting.ts";

const BUILD_TIMEOUT_MS = 30 * 60_000;

/**
 * A new connection for every request: podman's network teardown of another container (the CLI's
 * here) may drop the tracked connections through a published port, and a kept-alive socket then
 * dies under the next request. The CLI's containers also run without a network for that reason.
 */
const freshConnections = new Agent({ pipelining: 0 });
const fetch = (url: string, init: Parameters<typeof undiciFetch>[1] = {}) => undiciFetch(url, { ...init, dispatcher: freshConnections });
const SOURCE_DATE_EPOCH = "1795824000";
const MAX_IMAGE_BYTES = 250 * 1000 * 1000;
const TAG = "work-item-api:test";

interface Built {
  image: string;
  id: string;
  sizeBytes: number;
  output: string | null;
}

async function buildImage(store: PodmanStore, output?: string): Promise<Built> {
  const result = await run(
    process.execPath,
    ["--import", "tsx", `${REPO_ROOT}/scripts/image/build.ts`, ...store.storage, "--tag", TAG, "--json", ...(output ? ["--output", output] : [])],
    { ...store.env, SOURCE_DATE_EPOCH },
    BUILD_TIMEOUT_MS,
  );
  assert.equal(result.code, 0, `npm run image failed:\n${result.stderr.slice(-4000)}`);
  return JSON.parse(result.stdout) as Built;
}

const missing = imageToolsMissing();

describe("the image", { skip: missing ?? false, timeout: 3 * BUILD_TIMEOUT_MS }, () => {
  const first = createPodmanStore("image-a");
  const second = createPodmanStore("image-b");
  let built: Built;
  let rebuilt: Built;

  before(async () => {
    // At once: the cores are shared, but the downloads and the waits overlap.
    [built, rebuilt] = await Promise.all([buildImage(first, `${first.folder}/work-item-api.oci.tar`), buildImage(second)]);
  });
  after(async () => {
    await freshConnections.close();
    await first.remove();
    await second.remove();
  });

  test("two builds in empty stores with one SOURCE_DATE_EPOCH are one image, of at most 250 MB", async (t) => {
    t.diagnostic(`image ${built.id}, ${(built.sizeBytes / 1e6).toFixed(1)} MB`);
    assert.equal(rebuilt.id, built.id, "the same image id");
    assert.ok(built.sizeBytes <= MAX_IMAGE_BYTES, `${(built.sizeBytes / 1e6).toFixed(0)} MB`);
    const archive = await run("tar", ["-tf", built.output!], process.env);
    assert.match(archive.stdout, /index\.json/, "an OCI archive");
  });

  test("its configuration: user 10001, tini first, port 8080, the volume and the OCI labels", async () => {
    const [config] = JSON.parse(await first.podmanOk(["image", "inspect", TAG])) as Array<{
      Config: { User: string; Entrypoint: string[]; Cmd: string[]; ExposedPorts: Record<string, unknown>; Volumes: Record<string, unknown>; Labels: Record<string, string> };
      Created: string;
    }>;
    assert.equal(config!.Config.User, "10001:10001");
    assert.deepEqual(config!.Config.Entrypoint.slice(0, 2), ["/usr/bin/tini", "--"]);
    assert.deepEqual(config!.Config.Cmd, ["serve"]);
    assert.ok("8080/tcp" in config!.Config.ExposedPorts);
    assert.ok("/var/lib/work-item-api" in config!.Config.Volumes);
    const created = new Date(Number(SOURCE_DATE_EPOCH) * 1000).toISOString();
    assert.equal(config!.Config.Labels["org.opencontainers.image.created"], created);
    assert.match(config!.Config.Labels["org.opencontainers.image.revision"] ?? "", /^[0-9a-f]{40}$/);
    assert.match(config!.Config.Labels["org.opencontainers.image.version"] ?? "", /^\d+\.\d+\.\d+/);
    assert.ok("org.opencontainers.image.source" in config!.Config.Labels);
    assert.equal(new Date(config!.Created).toISOString(), created);
  });

  test("every module of the build imports in the image", async () => {
    const script = `
      import { readdirSync } from "node:fs";
      const entries = new Set(["server.js", "cli/main.js", "authority-sim/main.js", "store/sqlite/intake-writer-thread.js"]);
      const files = readdirSync("/app/dist", { recursive: true }).filter((f) => f.endsWith(".js") && !entries.has(f) && !f.startsWith("console/assets/"));
      for (const file of files) await import("/app/dist/" + file);
      console.log(files.length);`;
    const imported = await first.podmanOk(["run", "--rm", "--read-only", "--entrypoint", "/usr/local/bin/node", TAG, "--input-type=module", "-e", script]);
    assert.ok(Number(imported) > 100, `${imported.trim()} modules imported`);
  });

  test("it serves on a read-only root: ready within 15 s, the CLI through the image, add and read back, SIGTERM ends it at once, the data outlives the container", async (t) => {
    const port = await freePort();
    const common = ["--read-only", "--tmpfs", "/tmp", "--volume", "wia-data:/var/lib/work-item-api", "--env", `JWT_SECRET=${TEST_JWT_SECRET}`];
    const start = async (name: string) => {
      const startedAt = Date.now();
      await first.podmanOk(["run", "--detach", "--name", name, ...common, "--publish", `127.0.0.1:${port}:8080`, TAG]);
      await waitUntil("/readyz", async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok, 60_000, 100);
      return Date.now() - startedAt;
    };
    const readyMs = await start("wia-api");
    t.diagnostic(`ready ${readyMs} ms after podman run`);
    assert.ok(readyMs < 15_000, `ready after ${readyMs} ms`);
    assert.equal((await first.podmanOk(["exec", "wia-api", "id", "-u"])).trim(), "10001");

    const key = JSON.parse(await first.podmanOk(["run", "--rm", "--network", "none", ...common, TAG, "keys", "create", "--company-id", "42", "--json"])) as { apiKey: string; secret: string };
    const token = async () => {
      const login = await fetch(`http://127.0.0.1:${port}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
      assert.equal(login.status, 200);
      return ((await login.json()) as { bearerToken: string }).bearerToken;
    };
    const bearer = await token();
    const added = await fetch(`http://127.0.0.1:${port}/api/AuthorityRvdm/AddWorkItemCreate`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify(validWorkItem({ customerReference: "IMAGE-1" })),
    });
    assert.equal(added.status, 200, await added.clone().text());
    const { workItemId } = (await added.json()) as { workItemId: number };
    const readBack = async () => fetch(`http://127.0.0.1:${port}/api/AuthorityRvdm/WorkItem/${workItemId}`, { headers: { authorization: `Bearer ${await token()}` } });
    assert.equal((await readBack()).status, 200);

    const stoppingAt = Date.now();
    await first.podmanOk(["kill", "--signal", "TERM", "wia-api"]);
    const exitCode = (await first.podmanOk(["wait", "wia-api"])).trim();
    const stopMs = Date.now() - stoppingAt;
    t.diagnostic(`stopped ${stopMs} ms after SIGTERM`);
    assert.equal(exitCode, "0");
    assert.ok(stopMs < 2_000, `stopped after ${stopMs} ms`);
    await first.podmanOk(["rm", "wia-api"]);

    await start("wia-api-again");
    const again = await readBack();
    assert.equal(again.status, 200, "the item is still there in a new container on the same volume");
    assert.equal(((await again.json()) as { customerReference: string }).customerReference, "IMAGE-1");
    await first.podmanOk(["rm", "--force", "--time", "0", "wia-api-again"]);
  });

  test("on PostgreSQL: migrate with the CLI, then serve", async (t) => {
    const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");
    if (!postgres) return t.skip("no PostgreSQL here");
    const db = await postgres.create();
    try {
      const port = await freePort();
      const env = ["--network", "host", "--read-only", "--tmpfs", "/tmp", "--env", `DATABASE_URL=${db.databaseUrl}`, "--env", `JWT_SECRET=${TEST_JWT_SECRET}`];
      await first.podmanOk(["run", "--rm", ...env, TAG, "db", "migrate"]);
      const status = JSON.parse(await first.podmanOk(["run", "--rm", ...env, TAG, "db", "status", "--json"])) as { pending: unknown[] };
      assert.deepEqual(status.pending, []);
      await first.podmanOk(["run", "--detach", "--name", "wia-pg", ...env, "--env", `PORT=${port}`, "--env", "HOST=127.0.0.1", "--env", "MIGRATE_ON_START=false", TAG]);
      await waitUntil("/readyz on PostgreSQL", async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok, 60_000, 100);
      const key = JSON.parse(await first.podmanOk(["run", "--rm", ...env, TAG, "keys", "create", "--company-id", "43", "--json"])) as { apiKey: string; secret: string };
      const login = await fetch(`http://127.0.0.1:${port}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
      assert.equal(login.status, 200);
    } finally {
      await first.podman(["rm", "--force", "--time", "0", "wia-pg"]);
      await db.cleanup();
    }
  });
});
