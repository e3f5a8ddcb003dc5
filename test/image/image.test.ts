/**
 * The image (SPEC §21), built by `npm run image` and run with podman, black box:
 * - reproducible: two builds in two empty container stores, with one SOURCE_DATE_EPOCH, give one
 *   image id (the digest of the configuration, which names every layer's digest);
 * - at most 250 MB; user 10001; OCI labels; tini as PID 1;
 * - run with a read-only root, a tmpfs /tmp and a volume: /readyz within 15 s; a key made with
 *   the CLI through the image; authenticate, add, read back; SIGTERM ends it with exit 0 within
 *   2 s; a new container on the same volume still has the item;
 * - on PostgreSQL too, and every module of the build imports in the image (nothing it needs was
 *   pruned from node_modules);
 * - the deployments, with the two companions (PostgreSQL and Prometheus, from Debian's packages)
 *   built into the first store: deploy/compose/compose.yaml with podman-compose (items added
 *   through the two APIs are filed by the worker against the simulator and reported by webhook;
 *   Prometheus has loaded the rules and scrapes every target; `down` leaves nothing running), and
 *   deploy/kubernetes/ rendered by kustomize and played by `podman kube play` beside a
 *   PostgreSQL pod (the migration, two API pods and the worker pod file an item;
 *   test/helpers/kube-play.ts says what podman cannot take as it is).
 * Runs under `npm run test:image`, not `npm test`: a cold build takes minutes. One file, so the
 * deployments run the image the reproducibility test built: a third build would cost minutes.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { availableBackends } from "../helpers/backends.ts";
import { closeFreshConnections, fetchFresh as fetch, fileOneItem, waitForOk } from "../helpers/deployed-service.ts";
import { companionPod, playFiles } from "../helpers/kube-play.ts";
import { renderKustomizeBase } from "../helpers/kustomize.ts";
import { createPodmanStore, imageToolsMissing, run, waitForContainerReady, type PodmanStore } from "../helpers/podman.ts";
import { freePort, REPO_ROOT } from "../helpers/processes.ts";
import { metricValue } from "../helpers/prometheus.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

const BUILD_TIMEOUT_MS = 30 * 60_000;

const SOURCE_DATE_EPOCH = "1795824000";
const MAX_IMAGE_BYTES = 250 * 1000 * 1000;
const TAG = "localhost/work-item-api:test";
const COMPANIONS = { postgres: "localhost/work-item-api-postgres:test", prometheus: "localhost/work-item-api-prometheus:test" };
const ENCRYPTION_KEY = "an-encryption-key-for-the-deployment-tests";

interface Built {
  image: string;
  id: string;
  sizeBytes: number;
  output: string | null;
}

async function buildImage(store: PodmanStore, flags: string[], tag = TAG): Promise<Built> {
  const result = await run(process.execPath, ["--import", "tsx", `${REPO_ROOT}/scripts/image/build.ts`, ...store.storage, "--tag", tag, "--json", ...flags], { ...store.env, SOURCE_DATE_EPOCH }, BUILD_TIMEOUT_MS);
  assert.equal(result.code, 0, `npm run image ${flags.join(" ")} failed:\n${result.stderr.slice(-4000)}`);
  return JSON.parse(result.stdout) as Built;
}

/** What the test's webhook receiver (test/image/webhook-receiver.mjs) lists at /received. */
interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

const missing = imageToolsMissing(["podman-compose"]);

describe("the image", { skip: missing ?? false, timeout: 3 * BUILD_TIMEOUT_MS }, () => {
  const first = createPodmanStore("image-a");
  const second = createPodmanStore("image-b");
  let built: Built;
  let rebuilt: Built;

  before(async () => {
    // At once: the cores are shared, but the downloads and the waits overlap.
    [built, rebuilt] = await Promise.all([
      buildImage(first, ["--output", `${first.folder}/work-item-api.oci.tar`]),
      buildImage(second, []),
      buildImage(first, ["--postgres"], COMPANIONS.postgres).then(() => buildImage(first, ["--prometheus"], COMPANIONS.prometheus)),
    ]);
  });
  after(async () => {
    await closeFreshConnections();
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
    const imported = await first.podmanOk(["run", "--rm", "--read-only", "--network", "none", "--entrypoint", "/usr/local/bin/node", TAG, "--input-type=module", "-e", script]);
    assert.ok(Number(imported) > 100, `${imported.trim()} modules imported`);
  });

  test("it serves on a read-only root: ready within 15 s, the CLI through the image, add and read back, SIGTERM ends it at once, the data outlives the container", async (t) => {
    const port = await freePort();
    // A network of the test's own, not podman's default one: that one's bridge and subnet
    // (podman0, 10.88.0.0/16) are fixed, so another store on the machine, or what a killed run
    // left behind, may hold them; a created network gets a subnet that is free.
    const network = `wia-serve-${process.pid}`;
    await first.podmanOk(["network", "create", network]);
    const common = ["--read-only", "--tmpfs", "/tmp", "--volume", "wia-data:/var/lib/work-item-api", "--env", `JWT_SECRET=${TEST_JWT_SECRET}`];
    const start = async (name: string): Promise<number> => {
      const startedAt = Date.now();
      await first.podmanOk(["run", "--detach", "--name", name, ...common, "--network", network, "--publish", `127.0.0.1:${port}:8080`, TAG]);
      await waitForContainerReady(first, name, `http://127.0.0.1:${port}/readyz`, fetch);
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
    await first.podmanOk(["network", "rm", network]);
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
      await waitForContainerReady(first, "wia-pg", `http://127.0.0.1:${port}/readyz`, fetch);
      const key = JSON.parse(await first.podmanOk(["run", "--rm", ...env, TAG, "keys", "create", "--company-id", "43", "--json"])) as { apiKey: string; secret: string };
      const login = await fetch(`http://127.0.0.1:${port}/api/Login/Authenticate`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }) });
      assert.equal(login.status, 200);
    } finally {
      await first.podman(["rm", "--force", "--time", "0", "wia-pg"]);
      await db.cleanup();
    }
  });

  test("compose: PostgreSQL, a migration, two APIs, a worker, the simulator and Prometheus; an item filed and its webhook received; down leaves nothing running", async (t) => {
    const ports = { api1: await freePort(), api2: await freePort(), prometheus: await freePort(), receiver: await freePort() };
    const project = `wia-compose-${process.pid}`;
    const env = {
      ...first.env,
      WORK_ITEM_API_IMAGE: TAG,
      WORK_ITEM_API_POSTGRES_IMAGE: COMPANIONS.postgres,
      WORK_ITEM_API_PROMETHEUS_IMAGE: COMPANIONS.prometheus,
      API_1_PORT: String(ports.api1),
      API_2_PORT: String(ports.api2),
      PROMETHEUS_PORT: String(ports.prometheus),
      RECEIVER_PORT: String(ports.receiver),
      RECEIVER_SCRIPT: join(REPO_ROOT, "test/image/webhook-receiver.mjs"),
      BOT_SCHEDULE: "* * * * * *",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    };
    const compose = (args: string[]) =>
      run(
        "podman-compose",
        ["--podman-args", first.storage.join(" "), "-p", project, "-f", join(REPO_ROOT, "deploy/compose/compose.yaml"), "-f", join(REPO_ROOT, "test/image/compose.receiver.yaml"), ...args],
        env,
        10 * 60_000,
      );
    const running = async () => (await first.podmanOk(["ps", "--all", "--filter", `label=io.podman.compose.project=${project}`, "--format", "{{.Names}} {{.State}}"])).trim();
    try {
      const up = await compose(["up", "-d"]);
      assert.equal(up.code, 0, up.stderr.slice(-4000));
      const apis = [`http://127.0.0.1:${ports.api1}`, `http://127.0.0.1:${ports.api2}`];
      for (const api of apis) await waitForOk(`${api}/readyz`, `${api}/readyz`);
      const key = JSON.parse(await first.podmanOk(["exec", `${project}_api-1_1`, "/usr/local/bin/node", "/app/entry.mjs", "keys", "create", "--company-id", "42", "--json"])) as { apiKey: string; secret: string };

      const item = await fileOneItem({ loginUrl: apis[0]!, addUrl: apis[1]!, key, webhookUrl: "http://webhook-receiver:8080/hook", customerReference: "COMPOSE-1" });
      assert.match(item.result?.registrationNumber ?? "", /^RVDM-/);
      const received = await waitUntil(
        "the item's webhook at the receiver",
        async () => {
          const list = (await (await fetch(`http://127.0.0.1:${ports.receiver}/received`)).json()) as Received[];
          return list.find((request) => request.body.includes(`"workItemId":${item.workItemId}`) && request.body.includes("Successful"));
        },
        HANG_TIMEOUT_MS,
        500,
      );
      assert.ok(received.headers["webhook-signature"], "signed");

      const prometheus = `http://127.0.0.1:${ports.prometheus}`;
      const rules = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as { data: { groups: Array<{ name: string; rules: Array<{ name: string }> }> } };
      const shipped = (parse(readFileSync(join(REPO_ROOT, "deploy/prometheus/work-item-api.rules.yml"), "utf8")) as { groups: Array<{ rules: Array<{ alert: string }> }> }).groups.flatMap((group) => group.rules.map((rule) => rule.alert));
      assert.deepEqual(rules.data.groups.flatMap((group) => group.rules.map((rule) => rule.name)).sort(), shipped.sort(), "every shipped rule loaded");
      const targets = await waitUntil(
        "Prometheus to scrape every target",
        async () => {
          const answer = (await (await fetch(`${prometheus}/api/v1/targets`)).json()) as { data: { activeTargets: Array<{ labels: { instance: string; job: string }; health: string }> } };
          const active = answer.data.activeTargets;
          return active.length === 3 && active.every((target) => target.health === "up") ? active : undefined;
        },
        HANG_TIMEOUT_MS,
        1000,
      );
      assert.deepEqual(targets.map((target) => `${target.labels.job} ${target.labels.instance}`).sort(), ["work-item-api api-1:8080", "work-item-api api-2:8080", "work-item-api worker:8080"]);
      t.diagnostic(`compose: item ${item.workItemId} filed as ${item.result?.registrationNumber}; ${targets.length} targets up; ${shipped.length} rules`);

      const down = await compose(["down"]);
      assert.equal(down.code, 0, down.stderr.slice(-4000));
      assert.equal(await running(), "", "nothing of the project is left");
    } finally {
      await compose(["down"]);
    }
  });

  test("kubernetes: the base played by podman beside a PostgreSQL pod migrates, serves on two API pods and files an item with the worker", async (t) => {
    const objects = renderKustomizeBase();
    if (!objects) return t.skip("no kubectl here to render the base (kubectl kustomize)");
    const network = `wia-kube-${process.pid}`;
    const folder = first.folder;
    const write = (name: string, text: string) => {
      const path = join(folder, name);
      writeFileSync(path, text);
      return path;
    };
    const ipOf = async (container: string) => (await first.podmanOk(["inspect", container, "--format", `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`])).trim();
    const play = (file: string, extra: string[] = []) => first.podmanOk(["kube", "play", "--network", network, ...extra, file], { timeoutMs: 5 * 60_000 });
    // The base names the image localhost/work-item-api:<version>; the test's build carries that name too.
    const baseImage = (objects.find((object) => object.kind === "Deployment")!.spec as { template: { spec: { containers: Array<{ image: string }> } } }).template.spec.containers[0]!.image;
    await first.podmanOk(["tag", TAG, baseImage]);
    await first.podmanOk(["network", "create", network]);

    const password = "a-password-for-the-kube-test";
    await play(write("postgres.yaml", companionPod({ name: "postgres", image: COMPANIONS.postgres, env: { POSTGRES_USER: "work_item_api", POSTGRES_PASSWORD: password, POSTGRES_DB: "work_item_api" } })));
    await play(write("authority.yaml", companionPod({ name: "authority", image: TAG, args: ["authority-sim"], env: { AUTHORITY_SIM_HOST: "0.0.0.0", AUTHORITY_SIM_PORT: "8090" } })));
    const receiverScript = join(REPO_ROOT, "test/image/webhook-receiver.mjs");
    await first.podmanOk(["run", "--detach", "--name", "receiver", "--network", network, "--read-only", "--volume", `${receiverScript}:/receiver/webhook-receiver.mjs:ro`, "--entrypoint", "/usr/local/bin/node", TAG, "/receiver/webhook-receiver.mjs"]);
    const [postgresIp, authorityIp, receiverIp] = [await ipOf("postgres-postgres"), await ipOf("authority-authority"), await ipOf("receiver")];

    const files = playFiles(objects, {
      settings: { AUTHORITY_URL: `http://${authorityIp}:8090/`, BOT_SCHEDULE: "* * * * * *", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" },
      secrets: { DATABASE_URL: `postgres://work_item_api:${password}@${postgresIp}:5432/work_item_api`, JWT_SECRET: TEST_JWT_SECRET, DATA_ENCRYPTION_KEY: ENCRYPTION_KEY },
    });
    const configMaps = files.configMaps.flatMap(({ name, yaml }) => ["--configmap", write(`${name}.configmap.yaml`, yaml)]);
    await play(write("migrate.yaml", files.migratePod), configMaps);
    await waitUntil(
      "the migration pod to end with 0",
      async () => {
        const state = (await first.podmanOk(["inspect", "work-item-api-migrate-migrate", "--format", "{{.State.Status}} {{.State.ExitCode}}"])).trim();
        return state === "exited 0" ? state : undefined;
      },
      HANG_TIMEOUT_MS,
      500,
    );
    await play(write("deployments.yaml", files.deployments), configMaps);
    const apiPods = ["work-item-api-pod-0-api", "work-item-api-pod-1-api"];
    const apis = await Promise.all(apiPods.map(async (container) => `http://${await ipOf(container)}:8080`));
    for (const api of apis) await waitForOk(`${api}/readyz`, `${api}/readyz`);
    const worker = `http://${await ipOf("work-item-api-worker-pod-0-worker")}:8080`;
    await waitForOk(`${worker}/readyz`, `${worker}/readyz`);
    assert.equal((await first.podmanOk(["exec", apiPods[0]!, "id", "-u"])).trim(), "10001", "runAsUser");

    const key = JSON.parse(await first.podmanOk(["exec", apiPods[0]!, "/usr/local/bin/node", "/app/entry.mjs", "keys", "create", "--company-id", "44", "--json"])) as { apiKey: string; secret: string };
    const item = await fileOneItem({ loginUrl: apis[0]!, addUrl: apis[1]!, key, webhookUrl: `http://${receiverIp}:8080/hook`, customerReference: "KUBE-1" });
    assert.match(item.result?.registrationNumber ?? "", /^RVDM-/);
    const metrics = await (await fetch(`${worker}/metrics`)).text();
    assert.ok(metricValue(metrics, "work_item_api_bot_item_outcomes_total") >= 1, "the worker's metrics count the filing");
    t.diagnostic(`kubernetes: item ${item.workItemId} filed as ${item.result?.registrationNumber} through ${apis.length} API pods`);
  });
});
