/**
 * The figures bench:deadlines reports for one crunch (SPEC §14), worked out from its raw record:
 * items on time against the offline optimum, the small companies' wait, and the authority's
 * utilisation while work was due.
 */
import type { CrunchRun } from "./crunch-run.ts";
import { deadlineOptimum } from "./deadline-optimum.ts";
import { coveredAtLeast, lengthOf, subtract, union, type Interval } from "./intervals.ts";

/** The authority's capacity as the optimum and the utilisation see it. */
export interface Capacity {
  /** Calls at once (AUTHORITY_MAX_CONCURRENCY). */
  servers: number;
  /** How long a server is taken by one call: the latency, or longer when AUTHORITY_MAX_RPS binds. */
  callMs: number;
  /** The most calls that can be in flight on average: `servers`, or fewer when AUTHORITY_MAX_RPS binds. */
  inFlight: number;
}

export function capacityOf(settings: { concurrency: number; latencyMs: number; rps: number }): Capacity {
  const rpsCallMs = settings.rps > 0 ? (1000 * settings.concurrency) / settings.rps : 0;
  const callMs = Math.max(settings.latencyMs, rpsCallMs);
  return { servers: settings.concurrency, callMs, inFlight: (settings.concurrency * settings.latencyMs) / callMs };
}

export interface CrunchFigures {
  items: number;
  onTime: number;
  late: number;
  notSubmitted: number;
  /** Optimum with each item's submit and the status request that decides it (two calls). */
  optimum: number;
  /** Optimum with submits alone (status requests left until after the crunch): an upper bound. */
  submitsOnly: number;
  smallItems: number;
  smallOnTime: number;
  /** Add → submittedAt of the small companies' items, ms; Infinity when the quantile falls on an item never submitted. */
  smallWaitP50: number;
  smallWaitP95: number;
  bigWaitP95: number;
  /** Calls in flight ÷ capacity over the time with an item due and the authority up. */
  utilisation: number;
  /** The length of that time, ms. */
  dueUpMs: number;
  /**
   * The same over the time with at least `servers` items due (enough to fill every slot with a
   * submit) and the authority up: not lowered by the moments when too little was due to fill it.
   */
  backloggedUtilisation: number;
  backloggedMs: number;
  /**
   * With the bot's schedule counted in (`pickup`: when a pass first sees an item that arrived
   * then, as SPEC §5 has it: batches are taken up on the next scheduled pass): the optimum when
   * no item can start before that, and the utilisation over the time from then to its submit.
   */
  scheduled?: ScheduledFigures;
}

export interface ScheduledFigures {
  optimum: number;
  utilisation: number;
  dueUpMs: number;
  backloggedUtilisation: number;
  backloggedMs: number;
  /**
   * The backlogged utilisation with the breaker's time after each outage left out: the authority
   * is back, but a bot whose breaker opened learns it only from the probe the breaker lets through
   * once its time is up (SPEC §10), and the optimum does not wait for that.
   */
  afterBreakerUtilisation: number;
  afterBreakerMs: number;
}

/** The nearest-rank quantile `q` (0–1) of `values`. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function crunchFigures(
  run: Pick<CrunchRun, "items" | "outage" | "inFlight" | "endedAt">,
  capacity: Capacity,
  pickup?: (arrivedAt: number) => number,
  /** How long the breaker stays open before its probe (AUTHORITY_BREAKER_SECONDS), ms. */
  breakerMs = 0,
): CrunchFigures {
  const { items } = run;
  const onTime = items.filter((item) => item.submittedAt !== null && item.submittedAt <= item.deadlineAt).length;
  const submitted = items.filter((item) => item.submittedAt !== null).length;
  // An add's promise may settle a moment after the bot saw the item; it arrived by its submit.
  const arrival = (item: (typeof items)[number]) => Math.min(item.arrivedAt, item.submittedAt ?? Infinity);
  const jobs = items.map((item) => ({ arrivedAt: arrival(item), deadlineAt: item.deadlineAt }));
  const down = run.outage.map(([from, to]) => ({ from, to }));
  const optimum = deadlineOptimum(jobs, { servers: capacity.servers, jobMs: 2 * capacity.callMs, doneAfterMs: capacity.callMs, down }).count;
  const submitsOnly = deadlineOptimum(jobs, { servers: capacity.servers, jobMs: capacity.callMs, doneAfterMs: capacity.callMs, down }).count;
  const wait = (item: (typeof items)[number]) => (item.submittedAt === null ? Infinity : item.submittedAt - arrival(item));
  const small = items.filter((item) => !item.planned.big);
  const big = items.filter((item) => item.planned.big);
  const due: Interval[] = items.map((item) => [arrival(item), item.submittedAt ?? run.endedAt]);
  const dueUp = subtract(union(due), run.outage);
  const dueUpMs = lengthOf(dueUp);
  const backlogged = subtract(coveredAtLeast(due, capacity.servers), run.outage);
  const backloggedMs = lengthOf(backlogged);
  const utilisation = (window: Interval[], ms: number) => (ms > 0 ? run.inFlight.growthOver(window) / (capacity.inFlight * ms) : NaN);
  return {
    items: items.length,
    onTime,
    late: submitted - onTime,
    notSubmitted: items.length - submitted,
    optimum,
    submitsOnly,
    smallItems: small.length,
    smallOnTime: small.filter((item) => item.submittedAt !== null && item.submittedAt <= item.deadlineAt).length,
    smallWaitP50: quantile(small.map(wait), 0.5),
    smallWaitP95: quantile(small.map(wait), 0.95),
    bigWaitP95: quantile(big.map(wait), 0.95),
    utilisation: utilisation(dueUp, dueUpMs),
    dueUpMs,
    backloggedUtilisation: utilisation(backlogged, backloggedMs),
    backloggedMs,
    ...(pickup ? { scheduled: scheduledFigures(run, capacity, pickup, arrival, utilisation, breakerMs) } : {}),
  };
}

function scheduledFigures(
  run: Pick<CrunchRun, "items" | "outage" | "endedAt">,
  capacity: Capacity,
  pickup: (arrivedAt: number) => number,
  arrival: (item: CrunchRun["items"][number]) => number,
  utilisation: (window: Interval[], ms: number) => number,
  breakerMs: number,
): ScheduledFigures {
  const seen = (item: CrunchRun["items"][number]) => Math.min(pickup(arrival(item)), item.submittedAt ?? Infinity);
  const jobs = run.items.map((item) => ({ arrivedAt: seen(item), deadlineAt: item.deadlineAt }));
  const down = run.outage.map(([from, to]) => ({ from, to }));
  const optimum = deadlineOptimum(jobs, { servers: capacity.servers, jobMs: 2 * capacity.callMs, doneAfterMs: capacity.callMs, down }).count;
  const due = run.items.map((item): Interval => [seen(item), item.submittedAt ?? run.endedAt]);
  const dueUp = subtract(union(due), run.outage);
  const dueUpMs = lengthOf(dueUp);
  const backlogged = subtract(coveredAtLeast(due, capacity.servers), run.outage);
  const backloggedMs = lengthOf(backlogged);
  const afterBreaker = subtract(
    backlogged,
    run.outage.map(([, end]): Interval => [end, end + breakerMs]),
  );
  const afterBreakerMs = lengthOf(afterBreaker);
  return {
    optimum,
    utilisation: utilisation(dueUp, dueUpMs),
    dueUpMs,
    backloggedUtilisation: utilisation(backlogged, backloggedMs),
    backloggedMs,
    afterBreakerUtilisation: utilisation(afterBreaker, afterBreakerMs),
    afterBreakerMs,
  };
}
