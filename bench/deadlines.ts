/**
 * `npm run bench:deadlines -- [flags]`: filing by deadline across companies (SPEC §14). A crunch
 * replayed through the real bot code of one or more builds, on a compressed clock.
 *
 * The crunch: 1,000 items from 500 companies, one in 20 of them big and sending three quarters
 * of the items; the items of each of 4 deadlines (15 s apart, the last at 60 s) arrive over the
 * 30 s before it, in a surge towards it. The authority (the simulator of this checkout, a process
 * of its own) answers each call after 200 ms, and the bot may have AUTHORITY_MAX_CONCURRENCY=8
 * calls in flight: 40 calls a second, 20 items (a submit and the status request that decides
 * it), a little less than the crunch brings. From 24 s to 30 s it is down (503). The bot's own timings are compressed 60× with the clock (one
 * bench second stands for a minute): passes every second (BOT_SCHEDULE's default of once a
 * minute), breaker 1 s, retries from 0.5 s.
 *
 * Each build gets a fresh store; its items are added through its store (`addWorkItems`, with
 * `deadlineAt` set) at their planned times, and its `runBotOnce` is called pass after pass
 * until every item is submitted, or 20 s after the last deadline. Then the bench reads
 * `authority.submittedAt` back and reports, per build: items on time (submittedAt ≤ deadlineAt)
 * against the offline optimum for the same arrivals, outage and capacity (bench/lib/deadline-optimum.ts),
 * the p95 wait (add → submittedAt) of the small companies' items, and the authority's
 * utilisation while work was due: the simulator's calls in flight ÷ capacity over the time in
 * which an item was due and the authority was up.
 *
 *   npm run bench:deadlines                                  # this checkout, SQLite
 *   npm run bench:deadlines -- --build . --build 6e7e3a1     # this checkout, then the Part II bot
 *   npm run bench:deadlines -- --build /path/to/checkout --store postgres
 *
 * The table goes to stdout, progress to stderr; nothing is written to bench/results/.
 */
import type { BotBuild } from "./lib/bot-build.ts";
import { loadBuild } from "./lib/bot-build.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { deadlinesOf, planCrunch, type CrunchShape } from "./lib/crunch.ts";
import { BREAKER_MS, runCrunch, type CrunchRun, type CrunchSettings } from "./lib/crunch-run.ts";
import { capacityOf, crunchFigures, type Capacity, type CrunchFigures } from "./lib/deadline-figures.ts";
import { coveredAtLeast, lengthOf, subtract, type Interval } from "./lib/intervals.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";
import { loadavg } from "node:os";
import { stopAll, stopAllOnSignals } from "../scripts/lib/processes.ts";
import { measureClaimCosts, seedQueue, type ClaimCost, type ClaimCostCase } from "./lib/claim-cost.ts";

const USAGE = `usage: npm run bench:deadlines -- [flags]
  --build B             a checkout (folder) or a git revision whose bot runs the crunch; repeat
                        for several, run one after the other (default: this checkout)
  --store S             sqlite or postgres (default sqlite)
  --items N             items in the crunch (default 1000)
  --companies N         companies (default 500)
  --big-every N         one company in N is big (default 20)
  --big-share F         share of the items the big companies send (default 0.75)
  --arrival-seconds N   arrivals over this long; the last deadline at its end (default 60)
  --deadlines N         deadlines spaced evenly through it (default 4)
  --lead-seconds N      an item arrives at most this long before its deadline (default 30)
  --last-call-ms N      and at least this long before it (default 1000)
  --latency-ms N        the simulator's answer time (default 200)
  --concurrency N       AUTHORITY_MAX_CONCURRENCY (default 8)
  --rps N               AUTHORITY_MAX_RPS (default 0: none; the concurrency binds)
  --outage-at N         seconds into the crunch the authority goes down (default 24)
  --outage-seconds N    for how long (default 6; 0 for no outage)
  --drain-seconds N     how long after the last deadline the bot may go on (default 20)
  --passes P            every-second (default) or back-to-back
  --bot-concurrency N   BOT_CONCURRENCY (default: the build's)
  --claim-size N        BOT_CLAIM_SIZE, for builds that have it (default: the build's)
  --seed N              of the arrivals (default 1)
  --timeline            also print each second of the crunch: authority up or down, items picked
                        up and not submitted, how busy the authority was
  --claim-cost          instead of the crunch: the cost of one claim (claimFilingWork, 8 items)
                        with 10 due items over 10 companies and with 100,000 over 1,000, on
                        this checkout and the chosen store (SPEC §14, "Scale")
  --postgres-url URL    database the fresh schema is made in
                        (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test)
Takes about 90 s per build at the defaults.`;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function parseOptions(argv: string[]) {
  const values = benchFlags(argv, USAGE, {
    build: { type: "string", multiple: true },
    store: { type: "string", default: "sqlite" },
    items: { type: "string", default: "1000" },
    companies: { type: "string", default: "500" },
    "big-every": { type: "string", default: "20" },
    "big-share": { type: "string", default: "0.75" },
    "arrival-seconds": { type: "string", default: "60" },
    deadlines: { type: "string", default: "4" },
    "lead-seconds": { type: "string", default: "30" },
    "last-call-ms": { type: "string", default: "1000" },
    "latency-ms": { type: "string", default: "200" },
    concurrency: { type: "string", default: "8" },
    rps: { type: "string", default: "0" },
    "outage-at": { type: "string", default: "24" },
    "outage-seconds": { type: "string", default: "6" },
    "drain-seconds": { type: "string", default: "20" },
    passes: { type: "string", default: "every-second" },
    "bot-concurrency": { type: "string" },
    "claim-size": { type: "string" },
    seed: { type: "string", default: "1" },
    "claim-cost": { type: "boolean", default: false },
    timeline: { type: "boolean", default: false },
    "postgres-url": { type: "string", default: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
  });
  const whole = wholeNumber;
  if (values.store !== "sqlite" && values.store !== "postgres") throw new Error(`--store: sqlite or postgres, got ${JSON.stringify(values.store)}`);
  if (values.passes !== "every-second" && values.passes !== "back-to-back") throw new Error(`--passes: every-second or back-to-back, got ${JSON.stringify(values.passes)}`);
  const bigShare = Number(values["big-share"]);
  if (!(bigShare > 0 && bigShare < 1)) throw new Error(`--big-share must be between 0 and 1, got ${JSON.stringify(values["big-share"])}`);
  const shape: CrunchShape = {
    companies: whole("companies", values.companies, 2),
    bigEvery: whole("big-every", values["big-every"], 2),
    bigShare,
    items: Math.min(whole("items", values.items, 1), 100_000),
    arrivalMs: whole("arrival-seconds", values["arrival-seconds"], 1) * 1000,
    deadlines: whole("deadlines", values.deadlines, 1),
    leadMs: whole("lead-seconds", values["lead-seconds"], 1) * 1000,
    lastCallMs: whole("last-call-ms", values["last-call-ms"], 0),
    seed: whole("seed", values.seed, 0),
  };
  const settings: CrunchSettings = {
    latencyMs: whole("latency-ms", values["latency-ms"], 1),
    concurrency: whole("concurrency", values.concurrency, 1),
    rps: whole("rps", values.rps, 0),
    outageAtMs: whole("outage-at", values["outage-at"], 0) * 1000,
    outageMs: whole("outage-seconds", values["outage-seconds"], 0) * 1000,
    drainMs: Math.min(whole("drain-seconds", values["drain-seconds"], 0), 600) * 1000,
    passes: values.passes,
    env: {
      ...(values["bot-concurrency"] ? { BOT_CONCURRENCY: String(whole("bot-concurrency", values["bot-concurrency"], 1)) } : {}),
      ...(values["claim-size"] ? { BOT_CLAIM_SIZE: String(whole("claim-size", values["claim-size"], 1)) } : {}),
    },
  };
  return { builds: values.build ?? ["."], store: values.store, postgresUrl: values["postgres-url"], shape, settings, claimCost: values["claim-cost"], timeline: values.timeline };
}
type Options = ReturnType<typeof parseOptions>;

/** Passes every second: an item is first seen by the pass at the next whole second. */
function scheduledPickup(settings: Options["settings"]): ((arrivedAt: number) => number) | undefined {
  return settings.passes === "every-second" ? (at) => Math.ceil(at / 1000) * 1000 : undefined;
}

async function runBuild(spec: string, options: Options): Promise<{ run: CrunchRun; figures: CrunchFigures }> {
  const build: BotBuild = await loadBuild(spec);
  const location = options.store === "sqlite" ? sqliteBenchStore(false) : await postgresBenchStore(options.postgresUrl, false, "deadlines");
  try {
    log(`${build.label}: crunch of ${options.shape.items} items on ${location.description}`);
    const run = await runCrunch(build, location, planCrunch(options.shape), options.settings, log);
    return { run, figures: crunchFigures(run, capacityOf(options.settings), scheduledPickup(options.settings), BREAKER_MS) };
  } finally {
    await location.cleanup();
    build.dispose();
  }
}

const seconds = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "not submitted");
const share = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

function report(options: Options, results: Array<{ run: CrunchRun; figures: CrunchFigures }>): string {
  const { shape, settings } = options;
  const capacity = capacityOf(settings);
  const big = Math.ceil(shape.companies / shape.bigEvery);
  const deadlines = deadlinesOf(shape).map((ms) => ms / 1000);
  const lines = [
    `Deadlines on ${options.store}: ${shape.items} items from ${shape.companies} companies (${big} big ones send ${share(shape.bigShare, 1)}), ` +
      `arriving over ${shape.arrivalMs / 1000} s in surges before the deadlines at ${deadlines.join(", ")} s; ` +
      `authority ${settings.latencyMs} ms a call, ${settings.concurrency} at once${settings.rps > 0 ? `, ${settings.rps} calls/s at most` : ""} ` +
      `(${((1000 * capacity.servers) / capacity.callMs).toFixed(0)} calls/s), down from ${settings.outageAtMs / 1000} s for ${settings.outageMs / 1000} s; passes ${settings.passes}`,
    "",
    `| build | on time | optimum (submit + status) | of optimum | submits-only bound | of bound | small companies: on time, p50 / p95 wait | big: p95 wait | late, not submitted | utilisation while due | with ≥ ${settings.concurrency} due | passes, max in flight |`,
    "|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---|",
  ];
  for (const { run, figures: f } of results) {
    lines.push(
      `| ${run.build} | ${f.onTime} | ${f.optimum} | ${(f.onTime / f.optimum).toFixed(3)} | ${f.submitsOnly} | ${(f.onTime / f.submitsOnly).toFixed(3)} ` +
        `| ${share(f.smallOnTime, f.smallItems)} of ${f.smallItems}, ${seconds(f.smallWaitP50)} / ${seconds(f.smallWaitP95)} | ${seconds(f.bigWaitP95)} ` +
        `| ${f.late}, ${f.notSubmitted} | ${share(f.utilisation, 1)} of ${(f.dueUpMs / 1000).toFixed(1)} s ` +
        `| ${share(f.backloggedUtilisation, 1)} of ${(f.backloggedMs / 1000).toFixed(1)} s | ${run.passes}, ${run.maxInFlight} |`,
    );
  }
  if (results.some(({ figures }) => figures.scheduled)) {
    lines.push(
      "",
      "With the schedule counted in: a pass first sees an item at the next whole second (batches are taken up on the next scheduled pass, SPEC §5), so the optimum may not start it earlier, and the authority is not idle for want of work before then.",
      "",
      `| build | on time | optimum, picked up on schedule | of optimum | utilisation from pickup to submit | with ≥ ${settings.concurrency} picked up | the same, the breaker's ${BREAKER_MS / 1000} s after the outage left out |`,
      "|---|---:|---:|---:|---:|---:|---:|",
    );
    for (const { run, figures: f } of results) {
      if (!f.scheduled) continue;
      lines.push(
        `| ${run.build} | ${f.onTime} | ${f.scheduled.optimum} | ${(f.onTime / f.scheduled.optimum).toFixed(3)} | ${share(f.scheduled.utilisation, 1)} of ${(f.scheduled.dueUpMs / 1000).toFixed(1)} s ` +
          `| ${share(f.scheduled.backloggedUtilisation, 1)} of ${(f.scheduled.backloggedMs / 1000).toFixed(1)} s ` +
          `| ${share(f.scheduled.afterBreakerUtilisation, 1)} of ${(f.scheduled.afterBreakerMs / 1000).toFixed(1)} s |`,
      );
    }
  }
  for (const { run } of results) {
    if (run.passErrors.length > 0) lines.push("", `${run.build}: passes failed: ${run.passErrors.join(" | ")}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The claim's cost at two queue sizes, each on a fresh store, and their ratio. */
async function claimCostReport(options: Options): Promise<string> {
  const sizes = [
    { items: 10, companies: 10 },
    { items: 100_000, companies: 1000 },
  ];
  const locations: BenchStore[] = [];
  const queues: Array<{ location: BenchStore; size: ClaimCostCase }> = [];
  let rows: ClaimCost[];
  try {
    for (const size of sizes) {
      const location = options.store === "sqlite" ? sqliteBenchStore(false) : await postgresBenchStore(options.postgresUrl, false, "claimcost");
      locations.push(location);
      log(`claim cost: ${size.items} due items over ${size.companies} companies on ${location.description}`);
      await (await seedQueue(location, size, log)).close();
      queues.push({ location, size });
    }
    rows = await measureClaimCosts(queues, { blocks: 10, claims: 50, warmUp: 10, limit: 8 }, log);
  } finally {
    for (const location of locations) await location.cleanup();
  }
  const ms = (value: number) => value.toFixed(2);
  return [
    `Claim cost on ${options.store}: claimFilingWork of 8 items, each claim given back untimed, in 10 blocks of 50 in a row per queue, on fresh connections; load average ${loadavg()[0]!.toFixed(1)}`,
    "",
    "| due items | companies | claims | p50 ms | p95 ms | mean ms |",
    "|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) => `| ${row.items.toLocaleString("en")} | ${row.companies} | ${row.claims} | ${ms(row.p50Ms)} | ${ms(row.p95Ms)} | ${ms(row.meanMs)} |`),
    "",
    `100,000 against 10: ${(rows[1]!.p50Ms / rows[0]!.p50Ms).toFixed(2)}× at p50, ${(rows[1]!.meanMs / rows[0]!.meanMs).toFixed(2)}× on the mean (target: within 1.5×)`,
    "",
  ].join("\n");
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  stopAllOnSignals(2000);
  if (options.claimCost) {
    process.stdout.write(await claimCostReport(options));
    return;
  }
  const results = [];
  for (const spec of options.builds) results.push(await runBuild(spec, options));
  process.stdout.write(report(options, results));
  if (options.timeline) for (const { run } of results) process.stdout.write(timeline(run, capacityOf(options.settings), scheduledPickup(options.settings) ?? ((at) => at)));
}

/**
 * Second by second, from one pass time to the next: whether the authority was up, the items
 * picked up and not yet submitted (on average over the second, picked up as in the table's
 * "from pickup"), and how busy the authority was (calls in flight ÷ the capacity), to see where
 * a run lost its utilisation.
 */
function timeline(run: CrunchRun, capacity: Capacity, pickup: (arrivedAt: number) => number): string {
  const lines = [
    `${run.build}, second by second:`,
    "",
    `| s | authority | picked up, not submitted | busy | with ≥ ${capacity.servers} picked up | busy then |`,
    "|---:|---|---:|---:|---:|---:|",
  ];
  const waiting = run.items.map((item): [number, number] => {
    const end = item.submittedAt ?? run.endedAt;
    return [Math.min(pickup(Math.min(item.arrivedAt, end)), end), end];
  });
  const pickedUp = (from: number, to: number) => waiting.reduce((sum, [start, end]) => sum + Math.max(0, Math.min(end, to) - Math.max(start, from)), 0) / (to - from);
  // The table's "with ≥ 8 picked up": where in each second it was, and how busy the authority was then.
  const backlogged = subtract(coveredAtLeast(waiting, capacity.servers), run.outage);
  const firstSecond = Math.floor(run.startedAt / 1000) * 1000;
  for (let from = firstSecond; from < run.endedAt; from += 1000) {
    const to = Math.min(from + 1000, run.endedAt);
    const down = run.outage.some(([start, end]) => start < to && end > from);
    const busy = run.inFlight.growthOver([[from, to]]) / (capacity.inFlight * (to - from));
    const inSecond = backlogged.flatMap(([start, end]): Interval[] => (start < to && end > from ? [[Math.max(start, from), Math.min(end, to)]] : []));
    const backloggedMs = lengthOf(inSecond);
    const busyThen = backloggedMs > 0 ? share(run.inFlight.growthOver(inSecond) / (capacity.inFlight * backloggedMs), 1) : "";
    lines.push(`| ${(from - firstSecond) / 1000} | ${down ? "down" : "up"} | ${pickedUp(from, to).toFixed(1)} | ${share(busy, 1)} | ${backloggedMs > 0 ? `${Math.round(backloggedMs)} ms` : ""} | ${busyThen} |`);
  }
  return `\n${lines.join("\n")}\n`;
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench:deadlines failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
