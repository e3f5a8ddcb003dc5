/**
 * Drives one target with one list of request templates at a fixed concurrency for a fixed
 * time, with wrk (preferred) or autocannon, pinned to the load generator's cores.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pinned, runToEnd } from "./processes.ts";
import type { RequestTemplate } from "./routes.ts";

const here = dirname(fileURLToPath(import.meta.url));
/** Seconds wrk keeps running after the timed part, so answers in flight are still counted. */
const DRAIN_SECONDS = 3;

export type LoaderName = "wrk" | "autocannon";

export interface LoadRun {
  baseUrl: string;
  requests: RequestTemplate[];
  connections: number;
  durationSeconds: number;
  /** Count answers by status exactly (needed where the stored rows are checked afterwards). */
  countAnswers: boolean;
  cpus: string | undefined;
}

export interface LoadResult {
  loader: LoaderName;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  /** Exact count of 200 answers, when counted. */
  ok200: number | undefined;
  non2xx: number;
  socketErrors: number;
  timeouts: number;
  /** Requests sent but never answered when the generator stopped (wrk counting mode only). */
  unanswered: number | undefined;
}

export async function runLoad(loader: LoaderName, run: LoadRun): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "wia-load-"));
  try {
    return loader === "wrk" ? await runWrk(run, dir) : await runAutocannon(run, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const luaString = (text: string) => {
  if (text.includes("]==]")) throw new Error("template text cannot be written as a Lua long string");
  return `[==[${text}]==]`;
};

function luaSpec(requests: RequestTemplate[]): string {
  const entries = requests.map((t) => {
    const headers = Object.entries(t.headers)
      .map(([name, value]) => `[ ${luaString(name)} ] = ${luaString(value)}`)
      .join(", ");
    return `  { method = "${t.method}", path = ${luaString(t.path)}, headers = { ${headers} }${t.body === undefined ? "" : `, body = ${luaString(t.body)}`}${t.unique ? `, unique = ${luaString(t.unique)}` : ""} },`;
  });
  return `return { requests = {\n${entries.join("\n")}\n} }\n`;
}

interface WrkOutput {
  requests: number;
  durationUs: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyUs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  sent: number;
  received: number;
  ok200: number;
  non2xx: number;
}

async function runWrk(run: LoadRun, dir: string): Promise<LoadResult> {
  const specFile = join(dir, "spec.lua");
  writeFileSync(specFile, luaSpec(run.requests));
  const seconds = run.durationSeconds + (run.countAnswers ? DRAIN_SECONDS : 0);
  const args = [
    "-t1",
    `-c${run.connections}`,
    `-d${seconds}s`,
    "--timeout",
    "10s",
    "-s",
    join(here, "..", "load", "wrk-script.lua"),
    run.baseUrl,
    "--",
    specFile,
    String(run.countAnswers ? Math.round(run.durationSeconds * 1000) : 0),
  ];
  const [command, argv] = pinned(run.cpus, "wrk", args);
  const stdout = await runToEnd(command, argv, { ...process.env, WIA_WRK_COUNT: run.countAnswers ? "1" : "0" });
  const line = stdout.split("\n").find((l) => l.startsWith("WRK_RESULT "));
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
  const out = JSON.parse(line.slice("WRK_RESULT ".length)) as WrkOutput;
  const ms = (us: number) => us / 1000;
  const elapsed = run.countAnswers ? run.durationSeconds : out.durationUs / 1e6;
  return {
    loader: "wrk",
    requests: out.requests,
    requestsPerSecond: out.requests / elapsed,
    latencyMs: {
      p50: ms(out.latencyUs.p50),
      p90: ms(out.latencyUs.p90),
      p99: ms(out.latencyUs.p99),
      p999: ms(out.latencyUs.p999),
      max: ms(out.latencyUs.max),
      mean: ms(out.latencyUs.mean),
    },
    ok200: run.countAnswers ? out.ok200 : undefined,
    // wrk counts status >= 400 itself; in counting mode every non-2xx is counted by the script.
    non2xx: run.countAnswers ? out.non2xx : out.errors.status,
    socketErrors: out.errors.connect + out.errors.read + out.errors.write,
    timeouts: out.errors.timeout,
    unanswered: run.countAnswers ? Math.max(0, out.sent - out.received) : undefined,
  };
}

interface AutocannonOutput {
  requests: number;
  durationSeconds: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  ok200: number;
  latencyMs: LoadResult["latencyMs"];
}

async function runAutocannon(run: LoadRun, dir: string): Promise<LoadResult> {
  const specFile = join(dir, "spec.json");
  writeFileSync(specFile, JSON.stringify({ url: run.baseUrl, connections: run.connections, durationSeconds: run.durationSeconds, requests: run.requests }));
  const [command, argv] = pinned(run.cpus, process.execPath, ["--import", "tsx", join(here, "..", "load", "autocannon-runner.ts"), specFile]);
  const stdout = await runToEnd(command, argv);
  const line = stdout.split("\n").find((l) => l.startsWith("AUTOCANNON_RESULT "));
  if (!line) throw new Error(`autocannon printed no result:\n${stdout}`);
  const out = JSON.parse(line.slice("AUTOCANNON_RESULT ".length)) as AutocannonOutput;
  return {
    loader: "autocannon",
    requests: out.requests,
    requestsPerSecond: out.requests / out.durationSeconds,
    latencyMs: out.latencyMs,
    ok200: out.ok200,
    non2xx: out.non2xx,
    socketErrors: Math.max(0, out.errors - out.timeouts),
    timeouts: out.timeouts,
    // autocannon hangs up on requests still in flight at the end; their number is unknown.
    unanswered: undefined,
  };
}
