/**
 * `npm run bench:operator-reads -- [flags]`: the operators' reads across companies (SPEC §12) with a
 * million stored items, on SQLite and PostgreSQL.
 *
 * Per store: a fresh location (temp SQLite file, or a fresh PostgreSQL schema), the real
 * migrations (the store opened once), then `--items` items over `--companies` companies seeded
 * with bulk SQL straight into work_batches and work_items (a recursive CTE on SQLite, one
 * transaction per tenth; generate_series on PostgreSQL). The mix, oldest ids first:
 *
 *   - history: batches of 100 items of one company each, companies taking turns, created over the
 *     last 30 days, all Completed: 97.5% Successful (application and registration numbers), 2%
 *     Failed (error `{"code":"AUTHORITY_REJECTED",…}`, completed within the last 7 days), 0.5%
 *     Cancelled;
 *   - 0.2% Submitted (application number, no decision yet) in Processing batches, filed over the
 *     last day (some of them in the last hour);
 *   - `--new` New items (400 by default, two in the Open batch of each of 200 companies; more
 *     fill the Open batches of every company), accepted over the last hour, waiting for seven
 *     deadlines, as in a crunch: 5% overdue (2 h ago), 65% due in 2 h, and 5% each due a day,
 *     two, three … six days after that.
 *
 * The rows go through the real schema, and each step adds its items to the per-company counters
 * in its transaction, as the store does (New items left out: the overview counts those itself);
 * after seeding, the counters
 * are compared with a GROUP BY count of the items (a failed check fails the run), the overview's
 * counts must add up to every item and its deadlines to the seeded ones. PostgreSQL then gets
 * VACUUM ANALYZE, as autovacuum would give it after such a load; SQLite gets nothing, as the
 * service runs no ANALYZE.
 *
 * Then, through the store (the way the API calls it), each probe is called `--samples` times one
 * after another after a short warm-up, and p50/p95/p99/max of its wall time are reported:
 *
 *   overview        buildOverview (src/operators/overview.ts): what the Overview route returns
 *   deadlines       deadlineOverview and countSubmittedSince alone: the Overview's queue by
 *                   deadline and the bot's last hour (SPEC §14)
 *   page            listAllWorkItems, newest first, 50 items: the WorkItems page
 *   status=Failed   the same with status Failed
 *   companyId       the same for one company (companies spread over all of them)
 *   deep page       a page of 50 from a cursor (a position spread over all items)
 *
 * Over HTTP also the list's SPEC §25 parameters: `order=deadline` (the New items, and one
 * company's), `due=overdue`, and a customer reference: each page carries `total` (exact: from
 * the status counters, or a scan of at most 10,001 matches) or `totalEstimate` (more matches than
 * that, estimated from a sample of id windows); the report says which each gave.
 *
 * Targets (SPEC §12): overview p95 ≤ 100 ms, a WorkItems page p95 ≤ 50 ms. The measuring loop
 * (`sample`) only knows a probe as a function to call; the HTTP probes then time the same reads
 * through the operator API of a server process on the seeded store.
 * Writes bench/results/<timestamp>-operator-reads.{json,md}; the table goes to stdout, progress to
 * stderr. The exit code is non-zero only when a check fails (a missed target is reported).
 *
 *   npm run bench:operator-reads                                   both stores, 1,000,000 items
 *   npm run bench:operator-reads -- --store sqlite --items 100000 --samples 50
 *   npm run bench:operator-reads -- --new 100000                   a crunch: 100,000 items waiting
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join, relative } from "node:path";
import { freePort, startServer } from "../scripts/lib/processes.ts";
import { createOperatorAccount, issueOperatorToken } from "../src/operators/accounts.ts";
import { buildOverview, NEXT_DEADLINES } from "../src/operators/overview.ts";
import { openPostgresStore } from "../src/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import type { DeadlineOverview, Store } from "../src/store/store.ts";
import { ROOT, serverEnv } from "./lib/setup.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";
import { parseSeededStoreOptions, type SeededStoreOptions } from "./lib/seeded-store-options.ts";
import { expectedDeadlines, plan, seedPostgres, seedSqlite, type Check, type Plan } from "./lib/operator-reads-seed.ts";

const USAGE = `usage: npm run bench:operator-reads -- [flags]
  --store sqlite|postgres|both   stores to measure (default both)
  --items N                      stored work items (default 1000000)
  --companies N                  companies they belong to (default 1000)
  --new N                        of them New, waiting to be filed (default 400; e.g. 100000 for a crunch)
  --samples N                    timed calls per probe (default 200)
  --postgres-url URL             PostgreSQL server (default postgres://root@127.0.0.1:5432/test)
  --keep                         keep the temp SQLite folder / PostgreSQL schema
Takes 2–3 minutes at the defaults on a 2-core machine (most of it seeding).`;

const PAGE_SIZE = 50;
const TARGETS = { overview: 100, page: 50 } as const;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

type Options = SeededStoreOptions;

const parseOptions = (argv: string[]): Options => parseSeededStoreOptions(argv, USAGE, { newItems: 400 });

// ---------------------------------------------------------------------------------------------
// What is measured, and the loop that measures it.

/**
 * One thing to time: `call(i)` does the i-th request (i picks the cursor or company, so the
 * samples spread over the data) and `check` says what is wrong with its answer, if anything.
 * Store probes call the store; HTTP probes call the operator routes.
 */
interface Probe {
  name: string;
  target: keyof typeof TARGETS;
  call(i: number): Promise<unknown>;
  check(answer: unknown, i: number): string | undefined;
  /** What the answer was, for the report (a page's total or estimate). */
  describe?(answer: unknown): string;
}

/** `count` values spread evenly over 1..max, the i-th taken modulo count. */
const spread = (i: number, count: number, max: number) => Math.max(1, Math.floor((((i % count) + 0.5) * max) / count));

function storeProbes(store: Store, p: Plan): Probe[] {
  type Items = Awaited<ReturnType<Store["listAllWorkItems"]>>;
  const page = (name: string, query: (i: number) => Parameters<Store["listAllWorkItems"]>[0], ok: (items: Items, i: number) => string | undefined): Probe => ({
    name,
    target: "page",
    call: (i) => store.listAllWorkItems(query(i)),
    check: (answer, i) => {
      const items = answer as Items;
      return items.length !== PAGE_SIZE ? `${items.length} items, not ${PAGE_SIZE}` : ok(items, i);
    },
  });
  const expected = expectedDeadlines(p);
  const newestFirst = (items: Items) => (items.every((item, k) => k === 0 || item.workItemId < items[k - 1]!.workItemId) ? undefined : "not newest first");
  return [
    {
      name: "overview (buildOverview)",
      target: "overview",
      call: () => buildOverview(store, { botSchedule: "* * * * *" }),
      check: (answer) => {
        const { companies, deadlines, bot } = answer as Awaited<ReturnType<typeof buildOverview>>;
        const counted = companies.reduce((sum, c) => sum + Object.values(c.counts).reduce((a, b) => a + b, 0), 0);
        const failed = companies.reduce((sum, c) => sum + c.failedLast24h, 0);
        const withNew = companies.filter((c) => c.oldestNewAt !== null).length;
        if (companies.length !== p.companies) return `${companies.length} companies, not ${p.companies}`;
        if (counted !== p.items) return `counts add up to ${counted}, not ${p.items}`;
        if (failed === 0 || withNew !== p.openBatches) return `failedLast24h ${failed}, companies with a New item ${withNew} (expected ${p.openBatches})`;
        return deadlinesProblem(deadlines, bot.submittedLastHour, expected);
      },
    },
    {
      name: "deadlines and last hour (deadlineOverview, countSubmittedSince)",
      target: "overview",
      call: async () => {
        const now = new Date();
        const [deadlines, submittedLastHour] = await Promise.all([
          store.deadlineOverview({ now: now.toISOString(), limit: NEXT_DEADLINES }),
          store.countSubmittedSince(new Date(now.getTime() - 3600_000).toISOString()),
        ]);
        return { deadlines, submittedLastHour };
      },
      check: (answer) => {
        const { deadlines, submittedLastHour } = answer as { deadlines: DeadlineOverview; submittedLastHour: number };
        return deadlinesProblem(deadlines, submittedLastHour, expected);
      },
    },
    page("WorkItems page (newest first)", () => ({ limit: PAGE_SIZE }), (items) => newestFirst(items) ?? (items[0]!.workItemId === p.items ? undefined : "does not start at the newest item")),
    page("WorkItems status=Failed", () => ({ status: "Failed", limit: PAGE_SIZE }), (items) => newestFirst(items) ?? (items.every((item) => item.status === "Failed") ? undefined : "an item not Failed")),
    page(
      "WorkItems companyId",
      (i) => ({ companyIds: [spread(i, 97, p.companies)], limit: PAGE_SIZE }),
      (items, i) => newestFirst(items) ?? (items.every((item) => item.companyId === spread(i, 97, p.companies)) ? undefined : "an item of another company"),
    ),
    page(
      "WorkItems deep page (cursor)",
      (i) => ({ after: { order: "newest", workItemId: spread(i, 199, p.items - PAGE_SIZE) + PAGE_SIZE }, limit: PAGE_SIZE }),
      (items, i) => newestFirst(items) ?? (items[0]!.workItemId === spread(i, 199, p.items - PAGE_SIZE) + PAGE_SIZE - 1 ? undefined : "does not start right below the cursor"),
    ),
  ];
}

/**
 * What is wrong with the deadlines and the last hour's count, if anything. Time moves on while
 * the bench runs: the seeded deadlines are hours away, but the last hour's submits drop out.
 */
function deadlinesProblem(deadlines: DeadlineOverview, submittedLastHour: number, expected: ReturnType<typeof expectedDeadlines>): string | undefined {
  if (JSON.stringify(deadlines) !== JSON.stringify({ overdue: expected.overdue, next: expected.next })) {
    return `deadlines ${JSON.stringify(deadlines).slice(0, 300)}, expected ${JSON.stringify({ overdue: expected.overdue, next: expected.next }).slice(0, 300)}`;
  }
  if (submittedLastHour > expected.submittedLastHour || (expected.submittedLastHour > 0 && submittedLastHour === 0)) {
    return `submittedLastHour ${submittedLastHour}, seeded ${expected.submittedLastHour}`;
  }
  return undefined;
}

/**
 * The same measurements through the operator API over loopback HTTP (a server process of its
 * own, ROLE=api, on the seeded store): what an operator's script or the console waits for,
 * the JSON serialisation and the operator token's check included.
 */
function httpProbes(baseUrl: string, token: string, p: Plan): Probe[] {
  const get = async (path: string) => {
    const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as Record<string, unknown>;
    return response.status === 200 ? body : { status: response.status, body };
  };
  /** `size`: the items a page must hold (a full page unless the filter matches fewer). */
  const page = (name: string, path: (i: number) => string, size = PAGE_SIZE): Probe => ({
    name: `HTTP ${name}`,
    target: "page",
    call: (i) => get(path(i)),
    check: (answer) => {
      const { items, total, totalEstimate } = answer as { items?: unknown[]; total?: number | null; totalEstimate?: number | null };
      if (items?.length !== size) return `not a page of ${size}: ${JSON.stringify(answer).slice(0, 200)}`;
      return typeof total === "number" || typeof totalEstimate === "number" ? undefined : `neither total nor totalEstimate: ${JSON.stringify({ total, totalEstimate })}`;
    },
    describe: (answer) => {
      const { total, totalEstimate } = answer as { total: number | null; totalEstimate: number | null };
      return total !== null ? `total ${total.toLocaleString("en")} (exact)` : `totalEstimate ${totalEstimate!.toLocaleString("en")}`;
    },
  });
  return [
    {
      name: "HTTP GET /api/Operator/Overview",
      target: "overview",
      call: () => get("/api/Operator/Overview"),
      check: (answer) => {
        const companies = (answer as { companies?: unknown[] }).companies;
        return companies?.length === p.companies ? undefined : `not ${p.companies} companies: ${JSON.stringify(answer).slice(0, 200)}`;
      },
    },
    page("WorkItems page (newest first)", () => `/api/Operator/WorkItems?limit=${PAGE_SIZE}`),
    page("WorkItems status=Failed", () => `/api/Operator/WorkItems?status=Failed&limit=${PAGE_SIZE}`),
    page("WorkItems companyId", (i) => `/api/Operator/WorkItems?companyId=${spread(i, 97, p.companies)}&limit=${PAGE_SIZE}`),
    page("WorkItems status=New order=deadline", () => `/api/Operator/WorkItems?status=New&order=deadline&limit=${PAGE_SIZE}`, Math.min(PAGE_SIZE, p.newItems)),
    page("WorkItems due=overdue order=deadline", () => `/api/Operator/WorkItems?due=overdue&order=deadline&limit=${PAGE_SIZE}`, Math.min(PAGE_SIZE, expectedDeadlines(p).overdue)),
    page("WorkItems companyId order=deadline", (i) => `/api/Operator/WorkItems?companyId=${spread(i, 97, p.companies)}&order=deadline&limit=${PAGE_SIZE}`),
    page("WorkItems customerReference (one item)", (i) => `/api/Operator/WorkItems?customerReference=HIST-${spread(i, 89, p.history)}&limit=${PAGE_SIZE}`, 1),
  ];
}

interface Stats {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** CPU time of this process per call (on SQLite the query runs on this thread; on PostgreSQL it does not). */
  cpuMs: number;
}

/** Nearest rank. */
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

/** Calls the probe `warmup` times (checking each answer), then `samples` times one after another, timed. */
async function sample(probe: Probe, samples: number, warmup: number): Promise<{ stats: Stats; problem: string | undefined; described: string | undefined }> {
  let problem: string | undefined;
  let described: string | undefined;
  for (let i = 0; i < warmup; i++) {
    const answer = await probe.call(i);
    problem ??= probe.check(answer, i);
    if (problem === undefined) described ??= probe.describe?.(answer);
  }
  const wall: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await probe.call(i);
    wall.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  wall.sort((a, b) => a - b);
  return {
    stats: { samples, p50: quantile(wall, 0.5), p95: quantile(wall, 0.95), p99: quantile(wall, 0.99), max: wall.at(-1)!, cpuMs: (cpu.user + cpu.system) / 1000 / samples },
    problem,
    described,
  };
}

// ---------------------------------------------------------------------------------------------

interface Row {
  store: "sqlite" | "postgres";
  probe: string;
  stats: Stats;
  goalMs: number;
  met: boolean;
}

interface StoreRun {
  store: "sqlite" | "postgres";
  description: string;
  seedSeconds: number;
  rows: Row[];
  checks: Check[];
}

async function runStore(kind: "sqlite" | "postgres", options: Options): Promise<StoreRun> {
  const bench: BenchStore = kind === "sqlite" ? sqliteBenchStore(options.keep) : await postgresBenchStore(options.postgresUrl, options.keep, "bench_ops");
  const open = () => (kind === "sqlite" ? Promise.resolve(openSqliteStore(bench.databaseUrl.slice("sqlite:".length))) : openPostgresStore(bench.databaseUrl));
  try {
    log(`${kind}: ${bench.description}; the real migrations`);
    await (await open()).close();
    const p = plan(options.items, options.companies, options.newItems);
    log(`${kind}: seeding ${p.items.toLocaleString("en")} items over ${p.companies.toLocaleString("en")} companies (${p.newItems.toLocaleString("en")} New in ${p.openBatches} Open batches, ${p.submitted.toLocaleString("en")} Submitted)`);
    const started = performance.now();
    const counters = kind === "sqlite" ? seedSqlite(bench.databaseUrl.slice("sqlite:".length), p) : await seedPostgres(bench.databaseUrl, p);
    const seedSeconds = (performance.now() - started) / 1000;
    log(`${kind}: seeded in ${seedSeconds.toFixed(0)} s; ${counters.ok ? "PASS" : "FAIL"} ${counters.name}: ${counters.detail}`);
    const checks = [counters];
    const rows: Row[] = [];
    const measure = async (probes: Probe[]) => {
      for (const probe of probes) {
        log(`${kind}: ${probe.name}, ${options.samples} samples`);
        const { stats, problem, described } = await sample(probe, options.samples, Math.min(20, Math.max(3, Math.round(options.samples / 10))));
        checks.push({ name: `${probe.name}: the answer is right`, ok: problem === undefined, detail: problem ?? `checked on every warm-up call${described ? `; the first: ${described}` : ""}` });
        const goalMs = TARGETS[probe.target];
        rows.push({ store: kind, probe: probe.name, stats, goalMs, met: stats.p95 <= goalMs });
      }
    };
    const store = await open();
    let token: string;
    try {
      await measure(storeProbes(store, p));
      const operator = await createOperatorAccount(store, { email: "bench@example.com", role: "viewer" });
      token = (await issueOperatorToken(store, operator.email)).token;
    } finally {
      await store.close();
    }
    const server = await startServer(serverEnv(bench), { launcher: "tsx", port: await freePort(), readyBy: "healthz", readyTimeoutMs: 60_000 });
    try {
      await measure(httpProbes(server.baseUrl, token, p));
    } finally {
      await server.stop();
    }
    return { store: kind, description: bench.description, seedSeconds, rows, checks };
  } finally {
    await bench.cleanup();
    if (options.keep) log(`kept ${bench.description}`);
  }
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

function table(runs: StoreRun[]): string[] {
  return [
    "| store | measurement | p50 ms | p95 ms | p99 ms | max ms | bench CPU ms/call | target p95 | met |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ...runs.flatMap((run) =>
      run.rows.map((r) => `| ${r.store} | ${r.probe} | ${ms(r.stats.p50)} | ${ms(r.stats.p95)} | ${ms(r.stats.p99)} | ${ms(r.stats.max)} | ${ms(r.stats.cpuMs)} | ≤ ${r.goalMs} ms | ${r.met ? "met" : "**NOT met**"} |`),
    ),
  ];
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const startedAt = new Date();
  const loadAverageStart = loadavg();
  const runs: StoreRun[] = [];
  for (const kind of options.stores) runs.push(await runStore(kind, options));
  const loadAverageEnd = loadavg();

  const checks = runs.flatMap((run) => run.checks.map((c) => ({ ...c, name: `${run.store}: ${c.name}` })));
  const machine = `${cpus()[0]?.model ?? "unknown"}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GB, Node ${process.version}`;
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(" ");
  const lines = [
    `Operations: ${options.items.toLocaleString("en")} work items over ${options.companies.toLocaleString("en")} companies, ${options.newItems.toLocaleString("en")} of them New, ${options.samples} samples per measurement, called through the store one after another, page size ${PAGE_SIZE}`,
    "",
    ...table(runs),
    "",
    ...runs.map((run) => `- ${run.store}: ${run.description}; seeded in ${run.seedSeconds.toFixed(0)} s`),
    `- Machine: ${machine}; load average ${load(loadAverageStart)} at the start, ${load(loadAverageEnd)} at the end${Math.max(...loadAverageStart, ...loadAverageEnd) > 0.5 ? " (machine shared with other work: latencies are noisy)" : ""}`,
    ...checks.map((c) => `- ${c.ok ? "PASS" : "FAIL"} ${c.name}: ${c.detail}`),
    ...runs.flatMap((run) => run.rows.map((r) => `- ${r.met ? "met " : "MISS"} ${r.store} ${r.probe}: p95 ${ms(r.stats.p95)} ms (goal ≤ ${r.goalMs} ms)`)),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  const resultsDir = join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const base = `${startedAt.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}-operator-reads`;
  const files = { json: join(resultsDir, `${base}.json`), md: join(resultsDir, `${base}.md`) };
  const report = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench:operator-reads -- ${process.argv.slice(2).join(" ")}`.trim(),
    machine: { description: machine, loadAverageStart, loadAverageEnd },
    settings: { items: options.items, companies: options.companies, newItems: options.newItems, samples: options.samples, pageSize: PAGE_SIZE, targetsP95Ms: TARGETS },
    runs,
    checks,
  };
  writeFileSync(files.json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(files.md, `# Operations bench ${report.startedAt}\n\n\`${report.command}\`\n\n${lines.join("\n")}\n`);
  process.stdout.write(`wrote ${Object.values(files).map((f) => relative(ROOT, f)).join(", ")}\n`);
  return checks.every((c) => c.ok) ? 0 : 1;
}

process.exitCode = await main();
