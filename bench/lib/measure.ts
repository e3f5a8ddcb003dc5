/**
 * One measurement: a warm-up, then the timed run, while the target's memory and CPU time are
 * sampled and progress is shown.
 *
 * A route is measured PAIRED with the ceiling: the timed run is cut into slices of about two
 * seconds, alternating route and ceiling, so whatever else runs on the machine falls on both
 * alike. The route's ratio to the ceiling is taken over those paired slices.
 */
import { mergeLoads, runLoad, type LoaderName, type LoadResult } from "./load.ts";
import type { Measurement } from "./model.ts";
import { cpuSecondsOf, sampleMemory } from "./processes.ts";
import type { RequestTemplate } from "./routes.ts";

const SLICE_SECONDS = 2;

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

const title = (input: MeasureInput) => `${input.name}${input.phase ? ` @ ${input.phase}` : ""}`;

function progress(ctx: MeasureContext, text: string): () => void {
  if (!process.stderr.isTTY) {
    ctx.log(text);
    return () => {};
  }
  const started = Date.now();
  const show = () => process.stderr.write(`\r  ${text} ${((Date.now() - started) / 1000).toFixed(0)} s`.padEnd(100));
  show();
  const timer = setInterval(show, 1000);
  return () => {
    clearInterval(timer);
    process.stderr.write(`\r${" ".repeat(100)}\r`);
  };
}

/** Load, CPU and memory of one target over its slices. */
class Tally {
  readonly loads: LoadResult[] = [];
  cpuSeconds = 0;
  busySeconds = 0;
  private readonly memory;

  constructor(
    private readonly ctx: MeasureContext,
    readonly input: MeasureInput,
  ) {
    this.memory = sampleMemory(input.pid);
  }

  async run(seconds: number, label: string): Promise<void> {
    const cpuBefore = cpuSecondsOf(this.input.pid) ?? 0;
    const started = process.hrtime.bigint();
    const done = progress(this.ctx, `${title(this.input)}: ${label}`);
    try {
      this.loads.push(
        await runLoad(this.ctx.loader, {
          baseUrl: `http://127.0.0.1:${this.input.port}`,
          requests: this.input.requests,
          connections: this.ctx.connections,
          durationSeconds: seconds,
          countAnswers: this.input.countAnswers,
          cpus: this.ctx.loadCpus,
        }),
      );
    } finally {
      done();
    }
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    this.cpuSeconds += (cpuSecondsOf(this.input.pid) ?? cpuBefore) - cpuBefore;
    // In counting mode a run ends with a drain in which the target is nearly idle, so its CPU
    // share is taken over the timed part (the drain's few answers are in the request count).
    this.busySeconds += this.input.countAnswers ? Math.min(wall, seconds) : wall;
  }

  result(warmup: LoadResult | undefined): Measurement {
    const load = mergeLoads(this.loads);
    const { peakRssMb, hwmMb } = this.memory.stop();
    return {
      name: this.input.name,
      target: this.input.target,
      method: this.input.method,
      phase: this.input.phase ?? "",
      load,
      warmup,
      peakRssMb,
      hwmMb,
      cpuPercent: (this.cpuSeconds / Math.max(this.busySeconds, 0.001)) * 100,
      cpuMicrosPerRequest: (this.cpuSeconds * 1e6) / Math.max(1, load.requests),
      cpuRatioToCeiling: undefined,
      ratioToCeiling: undefined,
    };
  }
}

async function warmUp(ctx: MeasureContext, input: MeasureInput, seconds: number): Promise<LoadResult | undefined> {
  if (seconds <= 0) return undefined;
  const done = progress(ctx, `${title(input)}: warm-up ${seconds} s`);
  try {
    return await runLoad(ctx.loader, {
      baseUrl: `http://127.0.0.1:${input.port}`,
      requests: input.requests,
      connections: ctx.connections,
      durationSeconds: seconds,
      countAnswers: input.countAnswers,
      cpus: ctx.loadCpus,
    });
  } finally {
    done();
  }
}

function describe(m: Measurement): string {
  const l = m.load;
  const errors = l.non2xx + l.socketErrors + l.timeouts;
  const unanswered = (l.unanswered ?? 0) + (m.warmup?.unanswered ?? 0);
  return `${Math.round(l.requestsPerSecond).toLocaleString("en-US")} req/s, p50 ${l.latencyMs.p50.toFixed(2)} ms, p99 ${l.latencyMs.p99.toFixed(2)} ms, ${errors} errors, CPU ${m.cpuMicrosPerRequest.toFixed(0)} µs/req, peak RSS ${m.peakRssMb.toFixed(0)} MB${unanswered > 0 ? `, ${unanswered} sent but never answered` : ""}`;
}

/**
 * Measures `input`, and `ceiling` (or any other target it is compared with) in alternating
 * slices when given. Both get a warm-up first; a ceiling (nothing to warm) a short one.
 */
export async function measure(ctx: MeasureContext, input: MeasureInput, ceiling?: MeasureInput): Promise<{ route: Measurement; ceiling?: Measurement }> {
  const warmup = await warmUp(ctx, input, ctx.warmupSeconds);
  const ceilingWarmup = ceiling ? await warmUp(ctx, ceiling, ceiling.target === "ceiling" ? Math.min(ctx.warmupSeconds, 1) : ctx.warmupSeconds) : undefined;
  const slices = ceiling ? Math.max(1, Math.round(ctx.durationSeconds / SLICE_SECONDS)) : 1;
  // wrk takes whole seconds only (`-d1.67s` is a usage error), so a slice is a whole number of
  // seconds; `--duration 5` becomes three slices of 2 s.
  const seconds = Math.max(1, Math.round(ctx.durationSeconds / slices));
  const route = new Tally(ctx, input);
  const paired = ceiling ? new Tally(ctx, ceiling) : undefined;
  for (let slice = 1; slice <= slices; slice++) {
    const label = slices > 1 ? `slice ${slice}/${slices}` : `measuring ${seconds} s`;
    await route.run(seconds, label);
    await paired?.run(seconds, `${label} (paired with ${input.name})`);
  }
  const result = { route: route.result(warmup), ...(paired ? { ceiling: paired.result(ceilingWarmup) } : {}) };
  ctx.log(`  ${title(input)}: ${describe(result.route)}`);
  if (result.ceiling) ctx.log(`  ${title(ceiling!)}: ${describe(result.ceiling)}`);
  return result;
}
