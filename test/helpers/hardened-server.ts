/**
 * The real server as a child process (src/server.ts through tsx), for tests that need signals,
 * crashes and the process's own logs. It listens on a free loopback port, which it reports in
 * its log. Every child is stopped by its own PID.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL unless it has already exited; waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export async function startServer(env: Record<string, string>, startTimeoutMs = 20_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: REPO,
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${startTimeoutMs} ms:\n${output}`)), startTimeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (!output.includes('"msg":"work-item-api started"')) return;
      // The started line names the address; Fastify's own "Server listening at" line too.
      const match = /"address":"(http:\/\/[^"]+)"[^\n]*"msg":"work-item-api started"/.exec(output) ?? /Server listening at (http:\/\/[^"\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before it started:\n${output}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    url,
    port: Number(new URL(url).port),
    output: () => output,
    exited,
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
