/** The shape of one bench run's results (also the JSON written to bench/results/). */
import type { LoadResult } from "./load.ts";

export interface Measurement {
  /** Route name, or "ceiling GET" / "ceiling POST" / "pg baseline POST" / "Fastify floor <route>". */
  name: string;
  target: "server" | "ceiling" | "baseline" | "floor";
  method: "GET" | "POST";
  /** Growth phase ("10k items", "1M items"); empty for the main table. */
  phase: string;
  load: LoadResult;
  warmup: LoadResult | undefined;
  /** Highest RSS of the target process seen while this route ran, and its VmHWM afterwards. */
  peakRssMb: number;
  hwmMb: number;
  /** CPU time the target used per second of the timed run (100 = one full core). */
  cpuPercent: number;
  /** CPU time the target spent per answered request, in microseconds. */
  cpuMicrosPerRequest: number;
  /** The ceiling's CPU µs per request of the same method over this one's: a cost ratio that is
   * less sensitive than requests/s to other work competing for the machine. */
  cpuRatioToCeiling: number | undefined;
  /** requests/s over the ceiling's requests/s of the same method, measured in this run. */
  ratioToCeiling: number | undefined;
  /** Items stored at the end of the route (intake routes). */
  storedItems?: number;
}

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean;
}

export interface ProfileSummary {
  route: string;
  file: string;
  totalMs: number;
  topFunctions: Array<{ name: string; where: string; selfMs: number; percent: number }>;
  byArea: Array<{ area: string; selfMs: number; percent: number }>;
  /** Where a request's time goes: parse, validate, auth, store, serialize, hooks, logging. */
  byPhase: Array<{ phase: string; ms: number; percent: number }>;
}

/** One route measured on this build and on another revision's, in alternating rounds (`--against`). */
export interface SideBySide {
  route: string;
  against: string;
  /** The mean over the rounds of each build's requests/s over its paired ceiling. */
  thisToCeiling: number;
  againstToCeiling: number;
  /** thisToCeiling / againstToCeiling, and the same for the CPU cost per request. */
  ratio: number;
  cpuRatio: number;
  /** Each round's ratio, to see the spread. */
  roundRatios: number[];
  p99Ms: { this: number; against: number };
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  command: string;
  loader: "wrk" | "autocannon";
  machine: { cpu: string; cores: number; memoryGb: number; kernel: string; node: string; loadAverageStart: number[]; loadAverageEnd: number[]; shared: boolean };
  settings: { store: string; storeDescription: string; durationSeconds: number; warmupSeconds: number; connections: number; companies: number; pinning: string; profile: boolean };
  /** The ceiling over all its paired slices, and the lowest and highest of its pairings. */
  ceiling: Record<"GET" | "POST", { rps: number; min: number; max: number }>;
  measurements: Measurement[];
  checks: Check[];
  targets: Target[];
  profiles: ProfileSummary[];
  sideBySide: SideBySide[];
  notes: string[];
}
