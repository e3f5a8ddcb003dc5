/**
 * Drives one target with one list of request templates at a fixed concurrency for a fixed
 * time, with wrk (preferred) or autocannon, pinned to the load generator's cores.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runToEnd } from "../../scripts/lib/processes.ts";
import type { RequestTemplate } from "./routes.ts";

const here = dirname(fileURLToPath(import.meta.url));
/** Seconds wrk keeps running after the timed part, so answers in flight are still counted. */
const DRAIN_SECONDS = 2;

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
  /** Seconds of load the requests/s is taken over. */
  seconds: number;
  /** Load-generator runs merged into this result. */
  runs: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  /** The latency distribution as [percentile, ms] points; runs are merged through them. */
  quantilesMs: Array<[number, number]>;
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
  latencyUs: { max: number; mean: number; quantiles: Array<[number, number]> };
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
  const stdout = await runToEnd("wrk", args, { cpus: run.cpus, env: { ...process.env, WIA_WRK_COUNT: run.countAnswers ? "1" : "0" } });
  const line = stdout.split("\n").find((l) => l.startsWith("WRK_RESULT "));
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
  const out = JSON.parse(line.slice("WRK_RESULT ".length)) as WrkOutput;
  const elapsed = run.countAnswers ? run.durationSeconds : out.durationUs / 1e6;
  const quantilesMs = out.latencyUs.quantiles.map(([q, us]): [number, number] => [q, us / 1000]);
  return {
    loader: "wrk",
    requests: out.requests,
    seconds: elapsed,
    runs: 1,
    requestsPerSecond: out.requests / elapsed,
    latencyMs: summarise(quantilesMs, out.latencyUs.max / 1000, out.latencyUs.mean / 1000),
    quantilesMs,
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
  const stdout = await runToEnd(process.execPath, ["--import", "tsx", join(here, "..", "load", "autocannon-runner.ts"), specFile], { cpus: run.cpus });
  const line = stdout.split("\n").find((l) => l.startsWith("AUTOCANNON_RESULT "));
  if (!line) throw new Error(`autocannon printed no result:\n${stdout}`);
  const out = JSON.parse(line.slice("AUTOCANNON_RESULT ".length)) as AutocannonOutput;
  const l = out.latencyMs;
  return {
    loader: "autocannon",
    requests: out.requests,
    seconds: out.durationSeconds,
    runs: 1,
    requestsPerSecond: out.requests / out.durationSeconds,
    latencyMs: l,
    quantilesMs: [[50, l.p50], [90, l.p90], [99, l.p99], [99.9, l.p999], [100, l.max]],
    ok200: out.ok200,
    non2xx: out.non2xx,
    socketErrors: Math.max(0, out.errors - out.timeouts),
    timeouts: out.timeouts,
    // autocannon hangs up on requests still in flight at the end; their number is unknown.
    unanswered: undefined,
  };
}

const percentileOf = (quantiles: Array<[number, number]>, q: number) => quantiles.find(([at]) => at >= q)?.[1] ?? quantiles.at(-1)?.[1] ?? 0;

function summarise(quantilesMs: Array<[number, number]>, max: number, mean: number): LoadResult["latencyMs"] {
  return { p50: percentileOf(quantilesMs, 50), p90: percentileOf(quantilesMs, 90), p99: percentileOf(quantilesMs, 99), p999: percentileOf(quantilesMs, 99.9), max, mean };
}

/** Share of one run's requests at or below `ms`, read off its quantile points. */
function cdf(quantilesMs: Array<[number, number]>, ms: number): number {
  let below = 0;
  for (const [q, value] of quantilesMs) {
    if (value > ms) break;
    below = q / 100;
  }
  return below;
}

/**
 * One result for several runs of the same target (slices of one measurement): counts add up,
 * and the latency distribution is the mixture of the runs' distributions, weighted by requests.
 */
export function mergeLoads(results: LoadResult[]): LoadResult {
  if (results.length === 1) return results[0]!;
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const candidates = [...new Set(results.flatMap((r) => r.quantilesMs.map(([, ms]) => ms)))].sort((a, b) => a - b);
  const mixture = (ms: number) => results.reduce((sum, r) => sum + (r.requests / Math.max(1, requests)) * cdf(r.quantilesMs, ms), 0);
  const points = results[0]!.quantilesMs.map(([q]) => q);
  const quantilesMs = points.map((q): [number, number] => [q, candidates.find((ms) => mixture(ms) >= q / 100 - 1e-9) ?? candidates.at(-1) ?? 0]);
  const sum = (pick: (r: LoadResult) => number | undefined) => results.reduce((total, r) => total + (pick(r) ?? 0), 0);
  const max = Math.max(...results.map((r) => r.latencyMs.max));
  const mean = results.reduce((total, r) => total + r.latencyMs.mean * r.requests, 0) / Math.max(1, requests);
  return {
    loader: results[0]!.loader,
    requests,
    seconds,
    runs: results.reduce((total, r) => total + r.runs, 0),
    requestsPerSecond: requests / seconds,
    latencyMs: summarise(quantilesMs, max, mean),
    quantilesMs,
    ok200: results.every((r) => r.ok200 !== undefined) ? sum((r) => r.ok200) : undefined,
    non2xx: sum((r) => r.non2xx),
    socketErrors: sum((r) => r.socketErrors),
    timeouts: sum((r) => r.timeouts),
    unanswered: results.every((r) => r.unanswered !== undefined) ? sum((r) => r.unanswered) : undefined,
  };
}
