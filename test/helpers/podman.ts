/**
 * podman for the image tests (SPEC §21), in a container store of the run's own (`--root`,
 * `--runroot` under one temp folder) with test/image/containers.conf, so a test never sees nor
 * leaves anything in the machine's store. Networks too: a rootful podman keeps them in
 * /etc/containers/networks whatever the store, so each store names a folder of its own for them
 * (`network_config_dir`), and its reset cannot touch the machine's. Containers are named by the test and removed by name
 * with the store; nothing is matched by a pattern.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./processes.ts";

export const CONTAINERS_CONF = join(REPO_ROOT, "test/image/containers.conf");
const TOOLS = ["podman", "buildah", "mmdebstrap"];

/** Why the image tests cannot run here, in one line; undefined when they can. `also`: tools a test needs besides. */
export function imageToolsMissing(also: string[] = []): string | undefined {
  const missing = [...TOOLS, ...also].filter((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0);
  if (missing.length > 0) return `no ${missing.join(", ")} here (apt-get install podman buildah mmdebstrap runc uidmap slirp4netns podman-compose)`;
  if (process.getuid?.() !== 0) return "podman's store and networks here need root";
  return undefined;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface PodmanStore {
  folder: string;
  /** `--root DIR --runroot DIR`, for podman, buildah and `npm run image`. */
  storage: string[];
  env: Record<string, string | undefined>;
  podman(args: string[], options?: { timeoutMs?: number }): Promise<CommandResult>;
  /** podman, failing the test on a non-zero exit; its stdout. */
  podmanOk(args: string[], options?: { timeoutMs?: number }): Promise<string>;
  remove(): Promise<void>;
}

export function run(command: string, args: string[], env: Record<string, string | undefined>, timeoutMs = 20 * 60_000): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

export function createPodmanStore(prefix: string): PodmanStore {
  const folder = mkdtempSync(join(tmpdir(), `wia-${prefix}-`));
  const storage = ["--root", join(folder, "root"), "--runroot", join(folder, "run")];
  const networks = join(folder, "networks");
  mkdirSync(networks);
  const conf = join(folder, "containers.conf");
  writeFileSync(conf, `${readFileSync(CONTAINERS_CONF, "utf8")}\n[network]\nnetwork_config_dir = "${networks}"\n`);
  const env = { ...process.env, CONTAINERS_CONF: conf };
  const podman = (args: string[], options: { timeoutMs?: number } = {}) => run("podman", [...storage, ...args], env, options.timeoutMs);
  return {
    folder,
    storage,
    env,
    podman,
    async podmanOk(args, options) {
      const result = await podman(args, options);
      if (result.code !== 0) throw new Error(`podman ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
      return result.stdout;
    },
    async remove() {
      await podman(["pod", "rm", "--all", "--force", "--time", "0"]);
      await podman(["rm", "--all", "--force", "--time", "0"]);
      await podman(["volume", "rm", "--all", "--force"]);
      await podman(["system", "reset", "--force"]).catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * How long a container may take to answer its readiness probe. Far above what a start takes
 * even on a loaded machine (seconds), far below the suite's hang timeout: a container that
 * never answers fails the test with its logs in minutes, not after twenty.
 */
export const CONTAINER_READY_TIMEOUT_MS = 3 * 60_000;

/**
 * Resolves once GET `url` answers 2xx. Fails at once when the container `name` is no longer
 * running, and after `timeoutMs` when it runs but never answers; either way the error carries
 * the container's state, its last lines of log and the last answer or connection error.
 */
export async function waitForContainerReady(store: PodmanStore, name: string, url: string, fetchUrl: (url: string) => Promise<Response | { ok: boolean; status: number }>, timeoutMs = CONTAINER_READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  for (let probe = 0; ; probe += 1) {
    try {
      const answer = await fetchUrl(url);
      if (answer.ok) return;
      last = `HTTP ${answer.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      last = cause?.code ?? cause?.message ?? String(error);
    }
    const timedOut = Date.now() > deadline;
    // Asking podman costs a process; once a second is soon enough to see a container that stopped.
    const state = timedOut || probe % 10 === 9 ? (await store.podman(["inspect", name, "--format", "{{.State.Status}} exit {{.State.ExitCode}} {{.State.Error}}"])).stdout.trim() : "running";
    if (timedOut || !state.startsWith("running")) {
      const logs = await store.podman(["logs", "--tail", "40", name]);
      const why = timedOut ? `no 2xx from ${url} within ${timeoutMs} ms` : `container ${name} stopped before ${url} answered`;
      throw new Error(`${why}; state: ${state || "unknown"}; last probe: ${last}\n--- podman logs ${name}:\n${(logs.stdout + logs.stderr).trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
