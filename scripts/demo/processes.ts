/**
 * The child processes of the demo: the service and the admin CLI, both `node --import tsx` from
 * this checkout. Every child is remembered by PID so the demo can stop each one it started,
 * whatever way it ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
export { freePort } from "../../src/lib/free-port.ts";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

const children = new Set<ChildProcess>();

function start(script: string, args: string[], env: Record<string, string | undefined>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the child has exited. */
export function stopProcess(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Stops every child still running; returns their PIDs. */
export async function stopAll(): Promise<number[]> {
  const running = [...children];
  await Promise.all(running.map((child) => stopProcess(child)));
  return running.map((child) => child.pid ?? 0);
}

export interface Service {
  baseUrl: string;
  pid: number;
  output(): string;
}

/** Starts the service and waits until /healthz answers. */
export async function startService(env: Record<string, string | undefined>, port: number, timeoutMs = 60_000): Promise<Service> {
  const child = start("src/server.ts", [], { ...env, PORT: String(port), HOST: "127.0.0.1" });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}:\n${output}`);
    if (await answers(baseUrl)) return { baseUrl, pid: child.pid ?? 0, output: () => output };
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`the service did not answer ${baseUrl}/healthz within ${timeoutMs / 1000} s:\n${output}`);
}

export async function answers(baseUrl: string): Promise<boolean> {
  try {
    return (await fetch(new URL("healthz", `${baseUrl}/`), { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run cli -- <args>` without npm in between, so the PID is the CLI's own. */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = start("src/cli/main.ts", args, env);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => void stopProcess(child, 1000), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** Runs a CLI command with --json and parses its one JSON document. */
export async function cliJson<T>(args: string[], env: Record<string, string | undefined>): Promise<T> {
  const outcome = await runCli([...args, "--json"], env);
  if (outcome.code !== 0) throw new Error(`npm run cli -- ${args.join(" ")} failed (exit ${outcome.code}): ${outcome.stderr.trim()}`);
  return JSON.parse(outcome.stdout) as T;
}
