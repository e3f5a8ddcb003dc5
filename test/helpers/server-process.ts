/**
 * The real service as a child process (`node --import tsx src/server.ts`) on a temp SQLite data
 * folder, and the real admin CLI. Every process started here is stopped by its PID.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface DataDir {
  dir: string;
  databaseUrl: string;
  cleanup(): void;
}

export function freshDataDir(): DataDir {
  const dir = mkdtempSync(join(tmpdir(), "wia-proc-"));
  return { dir, databaseUrl: `sqlite:${join(dir, "data", "work-item-api.db")}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A port that was free a moment ago (for restarts on the same address). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export interface ServerProcess {
  baseUrl: string;
  port: number;
  pid: number;
  /** Everything the process wrote so far (stdout then stderr, interleaved). */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export interface StartOptions {
  databaseUrl: string;
  env?: Record<string, string>;
  port?: number;
  /** Default 30 s: tsx compiles on first start, and the machine is shared. */
  readyTimeoutMs?: number;
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", RATE_LIMIT_TENANT_RPS: "0", ...options.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: options.databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const server: ServerProcess = { baseUrl, port, pid: child.pid!, output: () => output, stop: () => stopChild(child) };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${baseUrl}/healthz`)).ok) return server;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await server.stop();
  throw new Error(`server did not answer /healthz in time:\n${output}`);
}

export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
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

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the admin CLI as its own process against `databaseUrl`. */
export function runCli(args: string[], databaseUrl: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env, DATABASE_URL: databaseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

export interface CliKey {
  keyId: string;
  companyId: number;
  apiKey: string;
  secret: string;
}

export async function createKeyWithCli(databaseUrl: string, companyId: number): Promise<CliKey> {
  const result = await runCli(["keys", "create", "--company-id", String(companyId), "--json"], databaseUrl);
  if (result.code !== 0) throw new Error(`keys create failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as CliKey;
}

/** The value of one sample of a Prometheus text exposition; 0 when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[3] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) {
      total += Number(match[4]);
      found = true;
    }
  }
  return found ? total : 0;
}
