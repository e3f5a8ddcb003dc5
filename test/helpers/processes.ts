/**
 * Real processes for tests: the server, the admin CLI and any other entry file of the package
 * (the authority simulator). Each is started either the way a user starts it (`npm start`,
 * `npm run cli -- …`: npm, a shell and node) or directly as `node --import tsx <entry>`, which
 * starts faster. Every child leads its own process group and is signalled through that group's
 * id, never by name; `stopAll()` in an `after` hook SIGKILLs whatever a test left running.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { waitUntil } from "./waiting.ts";
export { freePort } from "../../src/lib/free-port.ts";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** `npm`: the package script, as a user runs it. `tsx`: the entry file under node directly. */
export type Launcher = "npm" | "tsx";

/** Variables a test sets for a child; `undefined` removes one the child would inherit. */
export type Env = Record<string, string | undefined>;

export interface Stopped {
  /** Exit code of the started process; null when a signal ended it (always so for npm, which dies of the SIGTERM). */
  code: number | null;
  /** The whole process group was gone within the grace period, without SIGKILL. */
  graceful: boolean;
}

export interface StartedProcess {
  /** The child's pid, which is also its process group id. */
  pid: number;
  /** Complete stdout lines so far (pino JSON for the server). */
  lines: string[];
  stdout(): string;
  stderr(): string;
  /** stdout and stderr interleaved, for failure messages. */
  output(): string;
  /** Settles with the exit code (null when killed by a signal) once the child is gone. */
  exited: Promise<number | null>;
  /** SIGKILL to the whole group: no chance to clean up. */
  kill(): Promise<void>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the whole group is gone. */
  stop(graceMs?: number): Promise<Stopped>;
}

const running = new Set<StartedProcess>();

/** The environment every child gets: ours, minus settings a test must choose on purpose. */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info", NO_UPDATE_NOTIFIER: "1", npm_config_update_notifier: "false" };
  for (const name of ["JWT_SECRET", "DATABASE_URL", "ROLE", "PORT", "HOST", "BATCH_MAX_ITEMS", "TEST_CONCURRENCY"]) delete merged[name];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/** Waits for the group to be gone (npm's server may outlive npm by a moment); false on timeout. */
async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

function launch(launcher: Launcher, target: { script: string; entry: string }, args: string[], env: Env): StartedProcess {
  const [command, argv] =
    launcher === "npm"
      ? ["npm", ["run", target.script, ...(args.length > 0 ? ["--", ...args] : [])]]
      : [process.execPath, ["--import", "tsx", target.entry, ...args]];
  const child = spawn(command, argv, { cwd: REPO_ROOT, env: childEnv(env), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid!;
  let stdout = "";
  let stderr = "";
  let output = "";
  const lines: string[] = [];
  let partial = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stdout += text;
    output += text;
    const parts = (partial + text).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter((line) => line.length > 0));
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    output += chunk.toString("utf8");
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      if (partial) lines.push(partial);
      resolve(code);
    }),
  );
  const started: StartedProcess = {
    pid,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => output,
    exited,
    async kill() {
      signalGroup(pid, "SIGKILL");
      await exited;
      await groupGone(pid, 5_000);
    },
    async stop(graceMs = 10_000) {
      const deadline = Date.now() + graceMs;
      signalGroup(pid, "SIGTERM");
      const timer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      const graceful = Date.now() <= deadline && (await groupGone(pid, Math.max(0, deadline - Date.now())));
      if (!graceful) {
        signalGroup(pid, "SIGKILL");
        await groupGone(pid, 5_000);
      }
      return { code, graceful };
    },
  };
  running.add(started);
  void exited.then(() => groupGone(pid, 10_000)).then(() => running.delete(started));
  return started;
}

/** One JSON log line, or undefined for anything else (npm's banner). */
export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export interface ServerOptions {
  /** Default `tsx`; `npm` runs `npm start`. */
  launcher?: Launcher;
  /** Default 0 (any free port); a fixed one lets a restart keep its address. */
  port?: number;
  /** Default 60 s: tsx compiles on first start, and the machine is shared. */
  readyTimeoutMs?: number;
}

export interface ServerProcess extends StartedProcess {
  /** `http://127.0.0.1:<port>`; throws for ROLE=worker, which does not listen. */
  readonly baseUrl: string;
  readonly port: number;
}

/** Starts the server on loopback and resolves at its "work-item-api started" log line. */
export async function startServer(env: Env, options: ServerOptions = {}): Promise<ServerProcess> {
  const child = launch(options.launcher ?? "tsx", { script: "start", entry: "src/server.ts" }, [], { PORT: String(options.port ?? 0), HOST: "127.0.0.1", ...env });
  let exitCode: number | null | undefined;
  void child.exited.then((code) => (exitCode = code ?? null));
  let started: Record<string, unknown>;
  try {
    started = await waitUntil(
      "the server to start",
      () => {
        if (exitCode !== undefined) throw new Error(`server exited with ${exitCode} before it started:\n${child.output()}`);
        return child.lines.map(parseLine).find((record) => record?.msg === "work-item-api started");
      },
      options.readyTimeoutMs ?? 60_000,
    );
  } catch (error) {
    await child.kill();
    throw new Error(`${(error as Error).message}\n${child.output()}`, { cause: error });
  }
  const address = typeof started.address === "string" ? started.address.replace("0.0.0.0", "127.0.0.1") : undefined;
  const baseUrl = (): string => {
    if (!address) throw new Error(`the server (role ${String(started.role)}) does not listen`);
    return address;
  };
  return Object.defineProperties(child, {
    baseUrl: { get: baseUrl, enumerable: true },
    port: { get: () => Number(new URL(baseUrl()).port), enumerable: true },
  }) as ServerProcess;
}

/** Starts the admin CLI; the caller may kill it before it ends. */
export const startCli = (args: string[], env: Env = {}, launcher: Launcher = "tsx"): StartedProcess =>
  launch(launcher, { script: "cli", entry: "src/cli/main.ts" }, args, env);

/** Starts another entry file of the package (e.g. src/authority-sim/main.ts) directly. */
export const startScript = (entry: string, args: string[], env: Env = {}): StartedProcess => launch("tsx", { script: "", entry }, args, env);

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The JSON document a `--json` command printed (its last stdout line; npm prints a banner first). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs the admin CLI to its end (SIGKILLed after `timeoutMs`). */
export async function runCli(args: string[], env: Env = {}, options: { launcher?: Launcher; timeoutMs?: number } = {}): Promise<CliResult> {
  const cli = startCli(args, env, options.launcher);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const timer = setTimeout(() => void cli.kill(), timeoutMs);
  const code = await cli.exited.finally(() => clearTimeout(timer));
  const stdout = cli.stdout();
  return {
    code,
    stdout,
    stderr: cli.stderr(),
    json<T>() {
      const last = stdout.trim().split("\n").pop() ?? "";
      try {
        return JSON.parse(last) as T;
      } catch {
        throw new Error(`cli ${args.join(" ")} printed no JSON (exit ${code}):\n${cli.output()}`);
      }
    },
  };
}

export interface CliKey {
  keyId: string;
  companyId: number;
  apiKey: string;
  secret: string;
}

/** `keys create --json` through the real CLI. */
export async function createKeyWithCli(databaseUrl: string, companyId: number): Promise<CliKey> {
  const result = await runCli(["keys", "create", "--company-id", String(companyId), "--json"], { DATABASE_URL: databaseUrl });
  if (result.code !== 0) throw new Error(`keys create failed (${result.code}): ${result.stderr}`);
  return result.json<CliKey>();
}

/** SIGKILLs every process group started here that is still alive. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.kill()));
}
