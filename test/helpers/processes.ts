/**
 * Real processes, started the way a user starts them: `npm start` for the server and
 * `npm run cli -- …` for the admin CLI. Servers run in their own process group (npm, the shell
 * and node under it) and are stopped through that group's id, never by name.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The environment every child gets: ours, minus settings a test must choose on purpose. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["JWT_SECRET", "DATABASE_URL", "ROLE", "PORT", "HOST", "BATCH_MAX_ITEMS", "TEST_CONCURRENCY"]) delete base[name];
  const merged: NodeJS.ProcessEnv = { ...base, LOG_LEVEL: "info", NO_UPDATE_NOTIFIER: "1", npm_config_update_notifier: "false" };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

export interface ServerProcess {
  pid: number;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  /**
   * SIGTERM to the process group; SIGKILL when it has not exited after `graceMs`. Resolves true
   * when it went within the grace period (npm itself ends by the signal, so no exit code is kept).
   */
  stop(graceMs?: number): Promise<boolean>;
}

/** Starts `npm start` with PORT=0 on loopback and waits for its "started" log line. */
export function startServer(env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ServerProcess> {
  const child = spawn("npm", ["start"], {
    cwd: REPO_ROOT,
    env: childEnv({ PORT: "0", HOST: "127.0.0.1", ...env }),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      exited = true;
      resolve(code);
    }),
  );
  const stop = async (graceMs = 10_000) => {
    if (exited) return true;
    let killed = false;
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      return true;
    }
    const timer = setTimeout(() => {
      killed = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, graceMs);
    await exit;
    clearTimeout(timer);
    // The server itself may outlive npm by a moment; wait until the whole group is gone.
    for (let i = 0; i < 100 && groupAlive(child.pid!); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    return !killed && !groupAlive(child.pid!);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop(1000);
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk;
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        let record: { msg?: string; address?: string };
        try {
          record = JSON.parse(line) as typeof record;
        } catch {
          continue;
        }
        if (record.msg === "work-item-api started" && record.address) {
          clearTimeout(timer);
          resolve({ pid: child.pid!, baseUrl: record.address.replace("0.0.0.0", "127.0.0.1"), output: () => output, stop });
        }
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it started:\n${output}`));
    });
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The JSON document a `--json` command printed (its last stdout line; npm prints a banner first). */
  json<T = Record<string, unknown>>(): T;
}

/** Runs `npm run cli -- <args>` as a separate process. */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  const child = spawn("npm", ["run", "cli", "--", ...args], { cwd: REPO_ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`cli ${args.join(" ")} took over ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json<T>() {
          const last = stdout.trim().split("\n").pop() ?? "";
          try {
            return JSON.parse(last) as T;
          } catch {
            throw new Error(`cli ${args.join(" ")} printed no JSON (exit ${code}):\n${stdout}\n${stderr}`);
          }
        },
      });
    });
  });
}
