/**
 * Child processes of the bench: free ports, CPU pinning with taskset, waiting for a port to
 * answer, and reading a process's memory and CPU time from /proc.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
export { freePort } from "../../src/lib/free-port.ts";

export const hasCommand = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;

/** Which cores the server and the load generator get; undefined when pinning is impossible. */
export interface Pinning {
  server: string;
  load: string;
}

export function choosePinning(): Pinning | undefined {
  if (!hasCommand("taskset")) return undefined;
  const cores = availableParallelism();
  if (cores < 2) return undefined;
  // Server on core 0; the load generator gets the rest (on 2 cores: core 1).
  return { server: "0", load: cores === 2 ? "1" : `1-${cores - 1}` };
}

/** Prefixes a command with taskset when pinning is on. */
export function pinned(cpus: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpus === undefined ? [command, args] : ["taskset", ["-c", cpus, command, ...args]];
}

export interface Started {
  child: ChildProcess;
  pid: number;
  port: number;
  /** Everything the process wrote to stderr, for error messages. */
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts a long-running process and waits until `readyUrl` answers (any status). */
export async function startProcess(options: {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  port: number;
  readyPath?: string;
  timeoutMs?: number;
}): Promise<Started> {
  const child = spawn(options.command, options.args, { env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const url = `http://127.0.0.1:${options.port}${options.readyPath ?? "/"}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${options.name} exited with code ${child.exitCode} before it listened:\n${stderr.trim()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`${options.name} did not answer on port ${options.port} within ${options.timeoutMs ?? 30_000} ms:\n${stderr.trim()}`);
      }
      await sleep(100);
    }
  }
  return {
    child,
    pid: child.pid!,
    port: options.port,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident and peak resident memory of a process, in MB (from /proc/<pid>/status). */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rssMb: kb("VmRSS") / 1024, hwmMb: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process so far, in seconds (from /proc/<pid>/stat). */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Samples a process's memory every `everyMs` until stopped; returns the highest RSS seen. */
export function sampleMemory(pid: number, everyMs = 200): { stop(): { peakRssMb: number; hwmMb: number } } {
  let peak = memoryOf(pid)?.rssMb ?? 0;
  const timer = setInterval(() => {
    const now = memoryOf(pid);
    if (now && now.rssMb > peak) peak = now.rssMb;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = memoryOf(pid);
      return { peakRssMb: Math.max(peak, last?.rssMb ?? 0), hwmMb: last?.hwmMb ?? NaN };
    },
  };
}

/** Runs a command to completion and returns its output; throws with stderr on failure. */
export function runToEnd(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code}:\n${stderr.trim() || stdout.trim()}`));
    });
  });
}
