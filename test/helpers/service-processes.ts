/**
 * Real child processes of the service (server roles, CLI) for crash and restart tests. Every
 * child is tracked and stopped by its own PID; `stopAll()` in an `after` hook leaves none.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { waitUntil } from "./waiting.ts";

const children = new Set<ChildProcess>();

export interface ServiceProcess {
  pid: number;
  /** stdout lines so far (pino JSON for the server). */
  lines: string[];
  /** Where the API listens (roles all and api). */
  address: string | undefined;
  exited: Promise<number | null>;
  /** SIGKILL: the process gets no chance to clean up. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

function spawnTsx(entry: string, args: string[], env: Record<string, string>): { child: ChildProcess; lines: string[]; stderr: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ["--import", "tsx", entry, ...args], {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const lines: string[] = [];
  const stderr: string[] = [];
  let partial = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString("utf8");
    const parts = text.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter((line) => line.length > 0));
  });
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      children.delete(child);
      if (partial) lines.push(partial);
      resolve(code);
    }),
  );
  return { child, lines, stderr, exited };
}

/** Starts `src/server.ts` with the given environment and waits for its "started" line. */
export async function startService(env: Record<string, string>, timeoutMs = 20_000): Promise<ServiceProcess> {
  const { child, lines, stderr, exited } = spawnTsx("src/server.ts", [], { HOST: "127.0.0.1", PORT: "0", ...env });
  let dead = false;
  void exited.then(() => (dead = true));
  const started = await waitUntil(
    "the service to start",
    () => {
      if (dead) throw new Error(`service exited early: ${stderr.join("")}${lines.join("\n")}`);
      return lines.map(parseLine).find((entry) => entry?.msg === "work-item-api started");
    },
    timeoutMs,
  );
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
  };
  return {
    pid: child.pid!,
    lines,
    address: typeof started.address === "string" ? started.address : undefined,
    exited,
    async kill() {
      await signal("SIGKILL");
      await exited;
    },
    async stop(graceMs = 10_000) {
      await signal("SIGTERM");
      const timer = setTimeout(() => void signal("SIGKILL"), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Starts `npm run cli -- <args>` as a process; the caller may kill it before it ends. */
export const startCli = (args: string[], env: Record<string, string>) => startScript("src/cli/main.ts", args, env);

/** Starts any entry file of the package (e.g. src/authority-sim/main.ts) through tsx. */
export function startScript(entry: string, args: string[], env: Record<string, string>) {
  const { child, lines, stderr, exited } = spawnTsx(entry, args, env);
  return {
    pid: child.pid!,
    lines,
    stderr,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Runs the CLI to the end and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = startCli(args, env);
  const code = await cli.exited;
  return { code, stdout: cli.lines.join("\n"), stderr: cli.stderr.join("") };
}

export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** SIGKILLs every child still running, by PID. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}
