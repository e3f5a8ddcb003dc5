/**
 * The one launcher of child processes for the tests, the bench and the demo (production starts
 * nothing itself): the server, the admin CLI, other entry files of the package (the authority
 * simulator, the demo) and plain programs (load generators, the bench's helper servers).
 *
 * - Every child leads its own process group and is signalled through that group's id, never by
 *   name: `stop()` sends SIGTERM, then SIGKILL after a grace period, and resolves once the whole
 *   group is gone (under `npm start` the server is npm's child, through `exec`, and may outlive
 *   npm a moment).
 * - stdout and stderr are collected, stdout also as complete lines: readiness is a line the child
 *   prints (the server's "work-item-api started" log record, a helper's "listening <port>"), or,
 *   for a server that logs below info, its /healthz answering.
 * - `cpus` pins a child to those cores with taskset (the bench keeps server and load apart).
 * - Whatever is still running when this process exits is SIGKILLed; `stopAll()` ends it sooner.
 */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { buildIsCurrent } from "../../bin/build-state.mjs";
export { freePort } from "./free-port.ts";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * How an entry file of the package is started. `npm`: its package script, as the README tells a
 * user to run it (npm, a shell, node; for the CLI `npm run -s cli`, whose bin/cli.mjs runs the
 * build when it is current, else the sources). `tsx`: the source under node directly. `build`:
 * the production build under node (dist/, made by `npm run build`). `current`: the build when it
 * is current (bin/build-state.mjs), else the source under tsx; the same code either way, and the
 * build starts a server in about two thirds of the CPU time, since tsx's loader hooks run for
 * every module it loads.
 */
export type Launcher = "npm" | "tsx" | "build" | "current";

/** A child's whole environment; an `undefined` value leaves that variable out. */
export type Env = Record<string, string | undefined>;

export interface LaunchOptions {
  /** Default: this process's environment. */
  env?: Env;
  /** taskset CPU list, e.g. "0" or "1-3"; undefined runs unpinned. */
  cpus?: string;
  /** Default: the repository root. */
  cwd?: string;
  /** How long `stop()` waits after SIGTERM before SIGKILL, unless it is told; default 10 s. */
  stopGraceMs?: number;
}

export interface Stopped {
  /** Exit code; null when a signal ended the child (always so for npm, which dies of the SIGTERM). */
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
  /** Settles with the exit code (null when a signal ended it) once the child and its pipes are closed. */
  exited: Promise<number | null>;
  /** Resolves with the first stdout line, earlier or later, that `match` maps to a value; rejects when the child exits first or after `timeoutMs`. */
  waitForLine<T>(what: string, match: (line: string) => T | undefined, timeoutMs: number): Promise<T>;
  /** SIGKILL to the whole group: no chance to clean up. */
  kill(): Promise<void>;
  /** SIGTERM to the group, SIGKILL after `graceMs` (default: the launch's `stopGraceMs`); resolves once the whole group is gone. */
  stop(graceMs?: number): Promise<Stopped>;
}

const running = new Set<StartedProcess>();

// A child leads its own group, so the terminal's Ctrl-C does not reach it: end it with us.
process.once("exit", () => {
  for (const child of running) signalGroup(child.pid, "SIGKILL");
});

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    if (pgid > 0) process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pgid: number): boolean {
  if (pgid <= 0) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits for the process group to be gone; false on timeout. */
export async function groupGone(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const withoutUnset = (env: Env): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));

export const hasCommand = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;

/** Starts `command` in its own process group and collects what it prints. */
export function launch(command: string, args: string[], options: LaunchOptions = {}): StartedProcess {
  const [file, argv] = options.cpus === undefined ? [command, args] : ["taskset", ["-c", options.cpus, command, ...args]];
  const child = spawn(file, argv, { cwd: options.cwd ?? REPO_ROOT, env: withoutUnset(options.env ?? process.env), detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid ?? -1;
  let stdout = "";
  let stderr = "";
  let output = "";
  const lines: string[] = [];
  const lineWatchers = new Set<(line: string) => void>();
  let partial = "";
  const addLine = (line: string) => {
    lines.push(line);
    for (const watch of lineWatchers) watch(line);
  };
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    stdout += text;
    output += text;
    const parts = (partial + text).split("\n");
    partial = parts.pop() ?? "";
    for (const line of parts) if (line.length > 0) addLine(line);
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
    output += chunk.toString("utf8");
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    // A command that cannot be started (ENOENT) emits only "error".
    child.once("error", (error) => {
      output += `\n${command}: ${error.message}\n`;
      if (child.pid === undefined) resolve((exitCode = 127));
    });
    child.once("close", (code) => {
      if (partial) addLine(partial);
      resolve((exitCode = code));
    });
  });
  const started: StartedProcess = {
    pid,
    lines,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => output,
    exited,
    waitForLine<T>(what: string, match: (line: string) => T | undefined, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          lineWatchers.delete(watch);
          settle();
        };
        const watch = (line: string) => {
          const value = match(line);
          if (value !== undefined) finish(() => resolve(value));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))), timeoutMs);
        lineWatchers.add(watch);
        for (const line of lines) watch(line);
        void exited.then(() => finish(() => reject(new Error(`${command} exited with ${exitCode} before ${what}`))));
      });
    },
    async kill() {
      signalGroup(pid, "SIGKILL");
      await exited;
      await groupGone(pid, 5_000);
    },
    async stop(graceMs = options.stopGraceMs ?? 10_000) {
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

/** Runs `command` to its end and returns its stdout; throws with its output when it fails or outlives `timeoutMs`. */
export async function runToEnd(command: string, args: string[], options: LaunchOptions & { timeoutMs?: number } = {}): Promise<string> {
  const child = launch(command, args, options);
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => void child.stop(1000), options.timeoutMs);
  const code = await child.exited.finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${code}:\n${(child.stderr().trim() || child.output().trim()).slice(-8000)}`);
  return child.stdout();
}

/** An entry file of the package: its package script and its source under src/. */
interface Entry {
  script: string;
  source: string;
  /** Run as `npm run -s`, as the README says: npm then prints no banner before the entry's own stdout. */
  silent?: boolean;
}

/** The command line that starts `entry` the way `launcher` says. */
function commandFor(launcher: Launcher, entry: Entry, args: string[], nodeFlags: string[] = []): [string, string[]] {
  if (launcher === "npm") {
    if (nodeFlags.length > 0) throw new Error("node flags cannot be passed through npm run");
    return ["npm", ["run", ...(entry.silent ? ["-s"] : []), entry.script, ...(args.length > 0 ? ["--", ...args] : [])]];
  }
  const built = entry.source.replace(/^src\//, "dist/").replace(/\.ts$/, ".js");
  if (launcher === "tsx" || (launcher === "current" && !currentBuild(built))) return [process.execPath, [...nodeFlags, "--import", "tsx", entry.source, ...args]];
  return [process.execPath, [...nodeFlags, built, ...args]];
}

/** Asked once per entry and process: the sources do not change while tests run. */
const currentBuilds = new Map<string, boolean>();
function currentBuild(built: string): boolean {
  if (!currentBuilds.has(built)) currentBuilds.set(built, buildIsCurrent(REPO_ROOT, built));
  return currentBuilds.get(built)!;
}

const SERVER: Entry = { script: "start", source: "src/server.ts" };
const CLI: Entry = { script: "cli", source: "src/cli/main.ts", silent: true };

/** One JSON log line, or undefined for anything else (npm's banner). */
export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `<baseUrl>/healthz` answers 2xx right now. */
export async function answersHealthz(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(new URL("healthz", `${baseUrl}/`), { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

export interface ServerOptions {
  /** Default `current`. */
  launcher?: Launcher;
  /** Default 0 (any free port); a fixed one lets a restart keep its address. */
  port?: number;
  /**
   * `log` (default): the "work-item-api started" line, which needs LOG_LEVEL info or lower and
   * comes after the worker role started too. `healthz`: /healthz answers 2xx, for a server that
   * logs at warn; needs a fixed `port`.
   */
  readyBy?: "log" | "healthz";
  /** Default 60 s: tsx compiles on first start, and the machine is shared. */
  readyTimeoutMs?: number;
  cpus?: string;
  /** node flags before the entry (e.g. --cpu-prof); not with `npm`. */
  nodeFlags?: string[];
  stopGraceMs?: number;
  /** Default: the repository root; the bench points it at another build's copy. */
  cwd?: string;
}

export interface ServerProcess extends StartedProcess {
  /** `http://127.0.0.1:<port>` (for ROLE=worker, its probes and /metrics). */
  readonly baseUrl: string;
  readonly port: number;
}

/** Starts the server on loopback (HOST and PORT unless `env` sets them) and resolves once it is ready. */
export async function startServer(env: Env, options: ServerOptions = {}): Promise<ServerProcess> {
  const readyBy = options.readyBy ?? "log";
  const port = options.port ?? 0;
  if (readyBy === "healthz" && port === 0) throw new Error("readyBy healthz needs a fixed port");
  const [command, args] = commandFor(options.launcher ?? "current", SERVER, [], options.nodeFlags);
  const child = launch(command, args, { env: { PORT: String(port), HOST: "127.0.0.1", ...env }, cpus: options.cpus, stopGraceMs: options.stopGraceMs, cwd: options.cwd });
  const timeoutMs = options.readyTimeoutMs ?? 60_000;
  let address: string | undefined;
  try {
    if (readyBy === "log") {
      const started = await child.waitForLine("the server to start", (line) => (parseLine(line)?.msg === "work-item-api started" ? parseLine(line)! : undefined), timeoutMs);
      if (typeof started.address === "string") address = started.address.replace("0.0.0.0", "127.0.0.1");
      else if (started.role !== "worker") throw new Error(`the started line names no address: ${JSON.stringify(started)}`);
    } else {
      address = `http://127.0.0.1:${port}`;
      await waitForHealthz(child, address, timeoutMs);
    }
  } catch (error) {
    await child.kill();
    throw new Error(`${(error as Error).message}\n${child.output().slice(-8000)}`, { cause: error });
  }
  const baseUrl = (): string => {
    if (!address) throw new Error("the server names no address");
    return address;
  };
  return Object.defineProperties(child, {
    baseUrl: { get: baseUrl, enumerable: true },
    port: { get: () => Number(new URL(baseUrl()).port), enumerable: true },
  }) as ServerProcess;
}

async function waitForHealthz(child: StartedProcess, baseUrl: string, timeoutMs: number): Promise<void> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (!(await answersHealthz(baseUrl))) {
    if (exited) throw new Error(`the server exited with ${await child.exited} before it answered`);
    if (Date.now() > deadline) throw new Error(`the server did not answer ${baseUrl}/healthz within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Starts the admin CLI; the caller may kill it before it ends. */
export const startCli = (args: string[], env: Env, launcher: Launcher = "current", cwd?: string): StartedProcess => launch(...commandFor(launcher, CLI, args), { env, cwd });

/** Starts another entry file of the package (e.g. src/authority-sim/main.ts): built when current, else under tsx. */
export const startScript = (source: string, args: string[], env: Env): StartedProcess => launch(...commandFor("current", { script: "", source }, args), { env });

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The JSON document a `--json` command printed; throws unless stdout is exactly that one document. */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs the admin CLI to its end, however long that takes (a loaded machine is slower, not
 * wrong), unless `timeoutMs` says when to stop it.
 */
export async function runCli(args: string[], env: Env, options: { launcher?: Launcher; timeoutMs?: number; cwd?: string } = {}): Promise<CliResult> {
  const cli = startCli(args, env, options.launcher, options.cwd);
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => void cli.stop(1000), options.timeoutMs);
  const code = await cli.exited.finally(() => clearTimeout(timer));
  const stdout = cli.stdout();
  return {
    code,
    stdout,
    stderr: cli.stderr(),
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`cli ${args.join(" ")} printed not exactly one JSON document (exit ${code}):\n${cli.output()}`);
      }
    },
  };
}

/** Runs a CLI command with `--json` and returns its document; throws when it fails. */
export async function cliJson<T>(args: string[], env: Env, options: { launcher?: Launcher; timeoutMs?: number; cwd?: string } = {}): Promise<T> {
  const result = await runCli([...args, "--json"], env, options);
  if (result.code !== 0) throw new Error(`cli ${args.join(" ")} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`);
  return result.json<T>();
}

/**
 * Ends every process group started here that is still alive: at once with SIGKILL, or with
 * `graceMs` > 0 by SIGTERM first. Returns their pids.
 */
export async function stopAll(graceMs = 0): Promise<number[]> {
  const children = [...running];
  await Promise.all(children.map((child) => (graceMs > 0 ? child.stop(graceMs) : child.kill())));
  return children.map((child) => child.pid);
}

/**
 * For scripts run from a terminal, whose children lead their own groups out of reach of Ctrl-C:
 * on SIGINT or SIGTERM, call `before`, stop every child (SIGTERM, then SIGKILL after `graceMs`)
 * and exit 130 or 143.
 */
export function stopAllOnSignals(graceMs: number, before?: (signal: NodeJS.Signals) => void): void {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    process.once(signal, () => {
      before?.(signal);
      void stopAll(graceMs).then(() => process.exit(code));
    });
  }
}
