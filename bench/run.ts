/**
 * `npm run bench -- [flags]`: builds the service, starts it from the production build next to
 * a bare node:http ceiling, drives each route at a fixed concurrency for a fixed time, checks
 * that every 200 of AddWorkItemCreate is stored, and writes bench/results/<timestamp>.{json,md,svg}.
 * See `npm run bench -- --help` and docs/performance.md.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, totalmem } from "node:os";
import { join, relative } from "node:path";
import { mergeLoads, type LoaderName } from "./lib/load.ts";
import { measure, type MeasureContext, type MeasureInput } from "./lib/measure.ts";
import type { BenchReport, Check, Measurement, ProfileSummary, SideBySide } from "./lib/model.ts";
import { parseOptions, USAGE, type BenchOptions, type RouteName } from "./lib/options.ts";
import { hasCommand, stopAllOnSignals } from "../scripts/lib/processes.ts";
import { choosePinning } from "./lib/processes.ts";
import { summariseProfile } from "./lib/profile.ts";
import { consoleTable, errorsOf, markdown, svgChart } from "./lib/report.ts";
import { baselineTemplates, ROUTE_METHOD, templatesFor, type BenchTenant, type RequestTemplate } from "./lib/routes.ts";
import { runGrowth } from "./lib/growth.ts";
import { IntakeLedger, openSession, type Session } from "./lib/session.ts";
import { buildProduction, createTenants, ROOT, startCeiling, startHelperServer, startServer } from "./lib/setup.ts";
import { buildRevision, type SideBuild } from "./lib/side-build.ts";
import { postgresBenchStore } from "./lib/stores.ts";
import { evaluateTargets } from "./lib/targets.ts";


const startedAt = new Date();
const stamp = startedAt.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z");
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function chooseLoader(wanted: BenchOptions["loader"]): LoaderName {
  if (wanted === "autocannon") return "autocannon";
  if (hasCommand("wrk")) return "wrk";
  if (wanted === "wrk") throw new Error("--loader wrk: wrk is not installed (apt-get install wrk)");
  return "autocannon";
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const loader = chooseLoader(options.loader);
  const pinning = choosePinning();
  const loadAverageStart = loadavg();
  log(`load generator: ${loader}${loader === "autocannon" ? " (wrk is not installed)" : ""}; ${pinning ? `server on core ${pinning.server}, load generator on core ${pinning.load}` : "no CPU pinning (taskset missing or one core)"}`);
  log("building the production build (npm run build)");
  await buildProduction();
  if (options.store === "postgres" && !existsSync(join(ROOT, "dist", "store", "postgres"))) {
    process.stderr.write("--store postgres: this build has no PostgreSQL store (dist/store/postgres is missing); it is being written on another branch. Run with --store sqlite for now.\n");
    return 2;
  }
  const resultsDir = join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const base = `${stamp}-${options.store}${options.tag ? `-${options.tag}` : ""}`;
  const profileDir = join(resultsDir, "profiles", base);

  const ctx: MeasureContext = {
    loader,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    loadCpus: pinning?.load,
    log,
  };
  const measurements: Measurement[] = [];
  const checks: Check[] = [];
  const profiles: ProfileSummary[] = [];
  const sideBySide: SideBySide[] = [];
  const notes: string[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  let sideBuild: SideBuild | undefined;
  if (options.against) {
    log(`building ${options.against}'s src/ with this checkout's harness`);
    sideBuild = await buildRevision(options.against, options.keep);
    const built = sideBuild;
    cleanups.push(async () => built.remove());
    log(`${options.against} is ${built.commit.slice(0, 10)}, built in ${built.root}`);
  }

  const ceiling = await startCeiling(pinning?.server);
  cleanups.push(async () => void (await ceiling.stop()));
  let session: Session | undefined;
  try {
    session = await openSession(options, "bench", pinning?.server);
    const main = session;
    cleanups.push(async () => {
      await main.server.stop();
      await main.store.cleanup();
    });
    const ceilingTemplates = { GET: templatesFor("Ping", main.tenants), POST: templatesFor("AddWorkItemCreate", main.tenants) };
    // The ceiling is driven with the very bytes of the route it is paired with (same method).
    const ceilingFor = (route: string, method: "GET" | "POST"): MeasureInput => ({
      name: `ceiling ${method} (paired with ${route})`,
      target: "ceiling",
      method,
      pid: ceiling.pid,
      port: ceiling.port,
      requests: ceilingTemplates[method],
      countAnswers: method === "POST",
    });
    /** Records a route and its paired ceiling, with the route's ratios to that ceiling. */
    const record = (result: { route: Measurement; ceiling?: Measurement }) => {
      const { route, ceiling: paired } = result;
      if (paired?.target === "ceiling") {
        route.ratioToCeiling = route.load.requestsPerSecond / paired.load.requestsPerSecond;
        route.cpuRatioToCeiling = paired.cpuMicrosPerRequest / route.cpuMicrosPerRequest;
        paired.ratioToCeiling = 1;
        paired.cpuRatioToCeiling = 1;
      }
      measurements.push(route, ...(paired ? [paired] : []));
    };

    const measureRoute = async (s: Session, route: RouteName) => {
      let server = s.server;
      if (options.profile) {
        // One server process per route, so each CPU profile holds one route's work only.
        await server.stop();
        mkdirSync(profileDir, { recursive: true });
        server = s.server = await startServer(s.store, pinning?.server, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]);
      }
      const result = await measure(
        ctx,
        {
          name: route,
          target: "server",
          method: ROUTE_METHOD[route],
          pid: server.pid,
          port: server.port,
          requests: templatesFor(route, s.tenants),
          countAnswers: route === "AddWorkItemCreate",
        },
        ceilingFor(route, ROUTE_METHOD[route]),
      );
      if (route === "AddWorkItemCreate") s.ledger.record(result.route, options.connections);
      record(result);
      if (options.profile) {
        const before = new Set(readdirSync(profileDir));
        await server.stop();
        // node --cpu-prof writes one file per thread: CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile;
        // thread 0 is the event loop, others are workers (the SQLite intake writer).
        const written = readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile") && !before.has(f));
        for (const name of written) {
          const thread = Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(name)?.[1] ?? 0);
          const file = join(profileDir, `${route}${thread === 0 ? "" : `-thread${thread}`}.cpuprofile`);
          renameSync(join(profileDir, name), file);
          const summary = summariseProfile(file, `${route}${thread === 0 ? "" : ` (worker thread ${thread})`}`);
          // A worker that only started and idled (no intake on this route) is not worth a table.
          if (thread === 0 || route === "AddWorkItemCreate") profiles.push(summary);
        }
        s.server = await startServer(s.store, pinning?.server);
      }
    };
    if (options.traced) {
      // The collector shares the load generator's core: its work is not the server's.
      const sink = await startHelperServer("otlp-sink.mjs", [], pinning?.load);
      cleanups.push(async () => void (await sink.stop()));
      const traced = await openSession(options, "traced", pinning?.server, ROOT, {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
        OTEL_TRACES_SAMPLER: "always_on",
      });
      cleanups.push(async () => {
        await traced.server.stop();
        await traced.store.cleanup();
      });
      for (const route of options.routes) {
        sideBySide.push(await measureSideBySide(ctx, route, options, { label: "traced, every request exported", session: traced }, { label: "untraced", session: main }, ceilingFor, record));
      }
      checks.push(traced.ledger.check("traced: every acknowledged item is stored", await traced.store.countItems()));
    } else if (sideBuild) {
      const other = await openSession(options, "against", pinning?.server, sideBuild.root);
      cleanups.push(async () => {
        await other.server.stop();
        await other.store.cleanup();
      });
      const againstLabel = `${sideBuild.revision === sideBuild.commit.slice(0, sideBuild.revision.length) ? "" : `${sideBuild.revision} `}${sideBuild.commit.slice(0, 7)}`;
      for (const route of options.routes) {
        sideBySide.push(await measureSideBySide(ctx, route, options, { label: "this build", session: main }, { label: againstLabel, session: other }, ceilingFor, record));
      }
      checks.push(other.ledger.check(`${againstLabel}: every acknowledged item is stored`, await other.store.countItems()));
    } else {
      for (const route of options.routes) await measureRoute(main, route);
    }
    checks.push(main.ledger.check("every acknowledged item is stored", await main.store.countItems()));

    if (options.floor) {
      const floor = await startHelperServer("fastify-floor.mjs", [main.store.databaseUrl.slice("sqlite:".length), join(ROOT, "dist")], pinning?.server);
      cleanups.push(async () => void (await floor.stop()));
      log("Fastify floor: bare Fastify, no hooks, auth or schemas, reading through the store");
      for (const route of ["Ping", "WorkItem", "WorkItems"] as const) {
        const requests = templatesFor(route, main.tenants);
        record(await measure(ctx, { name: `Fastify floor ${route}`, target: "floor", method: "GET", pid: floor.pid, port: floor.port, requests, countAnswers: false }, ceilingFor(`Fastify floor ${route}`, "GET")));
      }
    }

    if (options.baselinePg) {
      if (options.store !== "postgres") throw new Error("--baseline-pg needs --store postgres");
      record(await measureBaseline(options, ctx, pinning?.server, main.tenants, ceilingFor("pg baseline", "POST"), checks, cleanups));
    }

    if (options.growth) {
      await main.server.stop();
      await runGrowth(options, ctx, pinning?.server, record, checks, cleanups);
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => log(`cleanup: ${(error as Error).message}`));
  }

  // The ceiling over all its paired slices, per method, and how far its pairings spread.
  const ceilingRuns = (method: "GET" | "POST") => measurements.filter((m) => m.target === "ceiling" && m.method === method);
  const ceilingSummary = (method: "GET" | "POST") => {
    const runs = ceilingRuns(method);
    const rates = runs.map((m) => m.load.requestsPerSecond);
    return runs.length === 0 ? { rps: 0, min: 0, max: 0 } : { rps: mergeLoads(runs.map((m) => m.load)).requestsPerSecond, min: Math.min(...rates), max: Math.max(...rates) };
  };
  const failing = measurements.filter((m) => errorsOf(m) > 0).map((m) => `${m.name}${m.phase ? ` @ ${m.phase}` : ""}: ${errorsOf(m)}`);
  checks.push({ name: "no errors (non-2xx, socket errors, timeouts)", ok: failing.length === 0, detail: failing.length === 0 ? "none on any route" : failing.join("; ") });
  const ceilingCpu = measurements.filter((m) => m.target === "ceiling").map((m) => m.cpuPercent);
  if (ceilingCpu.length > 0 && Math.min(...ceilingCpu) < 85) {
    notes.push(
      `the ceiling server used only ${Math.min(...ceilingCpu).toFixed(0)}% of its core in one of its pairings: there the load generator (or other work on the machine) was the limit, not the ceiling, which flatters that route's requests/s ratio; its CPU cost ratio does not depend on that`,
    );
  }
  if (options.profile) notes.push("run under node --cpu-prof with one server process per route: profiling costs throughput, so use the ratios of a run without --profile");
  const loadAverageEnd = loadavg();
  const shared = Math.max(...loadAverageStart) > 0.5;
  if (shared) notes.push(`other work was running on this machine (load average ${loadAverageStart.map((n) => n.toFixed(2)).join(" ")} before the run started): absolute numbers are noisy; compare the ratios of one run`);

  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim(),
    loader,
    machine: { cpu: cpus()[0]?.model ?? "unknown", cores: availableParallelism(), memoryGb: totalmem() / 2 ** 30, kernel: `Linux ${release()}`, node: process.version, loadAverageStart, loadAverageEnd, shared },
    settings: {
      store: options.store,
      storeDescription: options.store === "sqlite" ? "SQLite in a fresh temp folder (WAL, synchronous=FULL)" : "PostgreSQL 127.0.0.1:5432, a fresh schema per run (search_path in the connection string)",
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      companies: options.companies,
      pinning: pinning ? `taskset: server and ceiling on core ${pinning.server}, load generator on core ${pinning.load}` : "no CPU pinning",
      profile: options.profile,
    },
    ceiling: { GET: ceilingSummary("GET"), POST: ceilingSummary("POST") },
    measurements,
    checks,
    targets: evaluateTargets(measurements, options.store),
    profiles,
    sideBySide,
    notes,
  };
  const files = { json: join(resultsDir, `${base}.json`), md: join(resultsDir, `${base}.md`), svg: join(resultsDir, `${base}.svg`) };
  writeFileSync(files.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(files.svg, svgChart(report));
  writeFileSync(files.md, markdown(report, `${base}.svg`));
  process.stdout.write(`\n${consoleTable(report)}\n\nwrote ${Object.values(files).map((f) => relative(ROOT, f)).join(", ")}\n`);
  return checks.every((c) => c.ok) ? 0 : 1;
}

/**
 * One route on two servers, each paired with the ceiling, in alternating rounds: this build,
 * the other, this build, … Whatever else the machine does falls on both alike, and each
 * round's ratio shows how far the rounds agree.
 */
async function measureSideBySide(
  ctx: MeasureContext,
  route: RouteName,
  options: BenchOptions,
  ours: { label: string; session: Session },
  theirs: { label: string; session: Session },
  ceilingFor: (route: string, method: "GET" | "POST") => MeasureInput,
  record: (result: { route: Measurement; ceiling?: Measurement }) => void,
): Promise<SideBySide> {
  const runs = { ours: [] as Measurement[], theirs: [] as Measurement[] };
  for (let round = 1; round <= options.rounds; round++) {
    for (const [side, build] of [["ours", ours], ["theirs", theirs]] as const) {
      const { session } = build;
      const result = await measure(
        ctx,
        {
          name: route,
          target: "server",
          method: ROUTE_METHOD[route],
          phase: `${build.label}, round ${round}/${options.rounds}`,
          pid: session.server.pid,
          port: session.server.port,
          requests: templatesFor(route, session.tenants),
          countAnswers: route === "AddWorkItemCreate",
        },
        ceilingFor(route, ROUTE_METHOD[route]),
      );
      if (route === "AddWorkItemCreate") session.ledger.record(result.route, options.connections);
      record(result);
      runs[side].push(result.route);
    }
  }
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const toCeiling = (ms: Measurement[]) => mean(ms.map((m) => m.ratioToCeiling ?? 0));
  const cpuToCeiling = (ms: Measurement[]) => mean(ms.map((m) => m.cpuRatioToCeiling ?? 0));
  const summary: SideBySide = {
    route,
    against: theirs.label,
    thisToCeiling: toCeiling(runs.ours),
    againstToCeiling: toCeiling(runs.theirs),
    ratio: toCeiling(runs.ours) / toCeiling(runs.theirs),
    cpuRatio: cpuToCeiling(runs.ours) / cpuToCeiling(runs.theirs),
    roundRatios: runs.ours.map((m, i) => (m.ratioToCeiling ?? 0) / (runs.theirs[i]!.ratioToCeiling ?? 1)),
    p99Ms: { this: Math.max(...runs.ours.map((m) => m.load.latencyMs.p99)), against: Math.max(...runs.theirs.map((m) => m.load.latencyMs.p99)) },
  };
  log(`  ${route}: this build ${(summary.thisToCeiling * 100).toFixed(1)}% of the ceiling, ${theirs.label} ${(summary.againstToCeiling * 100).toFixed(1)}%: ${summary.ratio.toFixed(2)}× (rounds ${summary.roundRatios.map((r) => r.toFixed(2)).join(", ")})`);
  return summary;
}

/** One transaction per request over a plain pg pool, on the same machine, run and schema shape. */
async function measureBaseline(
  options: BenchOptions,
  ctx: MeasureContext,
  serverCpus: string | undefined,
  tenants: BenchTenant[],
  ceiling: MeasureInput,
  checks: Check[],
  cleanups: Array<() => Promise<void>>,
): Promise<{ route: Measurement; ceiling?: Measurement }> {
  const store = await postgresBenchStore(options.postgresUrl, options.keep, "bench_baseline");
  // The real migrations make the tables: the CLI opens the real store against the baseline's schema.
  await createTenants(store, options.companies);
  const baseline = await startHelperServer("pg-baseline.mjs", [store.databaseUrl, "10", "1000"], serverCpus);
  cleanups.push(async () => {
    await baseline.stop();
    await store.cleanup();
  });
  log("pg baseline: one transaction per request over a plain pg pool (10 connections)");
  const requests: RequestTemplate[] = baselineTemplates(tenants);
  const result = await measure(ctx, { name: "pg baseline POST", target: "baseline", method: "POST", pid: baseline.pid, port: baseline.port, requests, countAnswers: true }, ceiling);
  const ledger = new IntakeLedger();
  ledger.record(result.route, options.connections);
  checks.push(ledger.check("pg baseline: every acknowledged item is stored", await store.countItems()));
  return result;
}

// The server and load generator lead their own process groups, out of reach of Ctrl-C: stop them with the bench.
stopAllOnSignals(5000);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
