/**
 * One measurement: warm-up, then the timed run against a target process, while its memory
 * and CPU time are sampled and progress is shown.
 */
import { runLoad, type LoaderName, type LoadResult } from "./load.ts";
import type { Measurement } from "./model.ts";
import { cpuSecondsOf, sampleMemory } from "./processes.ts";
import type { RequestTemplate } from "./routes.ts";

export interface MeasureContext {
  loader: LoaderName;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  loadCpus: string | undefined;
  log(line: string): void;
}

export interface MeasureInput {
  name: string;
  target: Measurement["target"];
  method: "GET" | "POST";
  phase?: string;
  pid: number;
  port: number;
  requests: RequestTemplate[];
  /** Count 200s exactly (intake routes, whose stored rows are checked afterwards). */
  countAnswers: boolean;
}

function ticker(ctx: MeasureContext, input: MeasureInput, what: string, seconds: number, pid: number): () => void {
  const started = Date.now();
  const cpuStart = cpuSecondsOf(pid) ?? 0;
  const interactive = process.stderr.isTTY;
  const show = () => {
    const elapsed = (Date.now() - started) / 1000;
    const cpu = (((cpuSecondsOf(pid) ?? 0) - cpuStart) / Math.max(elapsed, 0.001)) * 100;
    const line = `  ${input.name}${input.phase ? ` @ ${input.phase}` : ""}: ${what} ${Math.min(elapsed, seconds).toFixed(0)}/${seconds} s, target CPU ${cpu.toFixed(0)}%`;
    if (interactive) process.stderr.write(`\r${line.padEnd(90)}`);
  };
  const timer = setInterval(show, 1000);
  if (!interactive) ctx.log(`  ${input.name}${input.phase ? ` @ ${input.phase}` : ""}: ${what} ${seconds} s…`);
  return () => {
    clearInterval(timer);
    if (interactive) process.stderr.write(`\r${" ".repeat(90)}\r`);
  };
}

export async function measure(ctx: MeasureContext, input: MeasureInput): Promise<Measurement> {
  const baseUrl = `http://127.0.0.1:${input.port}`;
  const run = (seconds: number) =>
    runLoad(ctx.loader, { baseUrl, requests: input.requests, connections: ctx.connections, durationSeconds: seconds, countAnswers: input.countAnswers, cpus: ctx.loadCpus });
  let warmup: LoadResult | undefined;
  if (ctx.warmupSeconds > 0) {
    const stop = ticker(ctx, input, "warm-up", ctx.warmupSeconds, input.pid);
    try {
      warmup = await run(ctx.warmupSeconds);
    } finally {
      stop();
    }
  }
  const memory = sampleMemory(input.pid);
  const cpuBefore = cpuSecondsOf(input.pid) ?? 0;
  const started = process.hrtime.bigint();
  const stop = ticker(ctx, input, "measuring", ctx.durationSeconds, input.pid);
  let load: LoadResult;
  try {
    load = await run(ctx.durationSeconds);
  } finally {
    stop();
  }
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuSeconds = (cpuSecondsOf(input.pid) ?? cpuBefore) - cpuBefore;
  const { peakRssMb, hwmMb } = memory.stop();
  // In counting mode the run ends with a drain in which the target is nearly idle, so the CPU share is
  // taken over the timed part only (the drain's few requests are noise).
  const busySeconds = input.countAnswers ? Math.min(wallSeconds, ctx.durationSeconds) : wallSeconds;
  const measurement: Measurement = {
    name: input.name,
    target: input.target,
    method: input.method,
    phase: input.phase ?? "",
    load,
    warmup,
    peakRssMb,
    hwmMb,
    cpuPercent: (cpuSeconds / busySeconds) * 100,
    cpuMicrosPerRequest: (cpuSeconds * 1e6) / Math.max(1, load.requests),
    cpuRatioToCeiling: undefined,
    ratioToCeiling: undefined,
  };
  const errors = load.non2xx + load.socketErrors + load.timeouts;
  const unanswered = (load.unanswered ?? 0) + (warmup?.unanswered ?? 0);
  if (unanswered > 0) ctx.log(`  ${input.name}: ${unanswered} requests were sent but not answered before the load generator stopped`);
  ctx.log(
    `  ${input.name}${input.phase ? ` @ ${input.phase}` : ""}: ${Math.round(load.requestsPerSecond).toLocaleString("en-US")} req/s, p50 ${load.latencyMs.p50.toFixed(2)} ms, p99 ${load.latencyMs.p99.toFixed(2)} ms, ${errors} errors, peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  return measurement;
}
