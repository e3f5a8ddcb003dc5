/**
 * `npm run bench:metrics-scrape -- [flags]`: what a Prometheus scrape of GET /metrics costs with a
 * million stored items (SPEC §17), on SQLite and PostgreSQL. The scrape reads two counts from the
 * store: the webhook outbox backlog and the New items past their deadline
 * (`work_item_api_items_overdue`, the operators' overview_overdue statement over the partial index
 * of New items by deadline, migration 0011).
 *
 * Per store: the data of `bench:operator-reads` (bench/lib/operator-reads-seed.ts: `--items` items
 * over `--companies` companies, `--new` of them New, one in twenty of those overdue), the
 * statement's query plan, then `--samples` calls one after another of:
 *
 *   overdue count   store.countOverdueItems(now), checked against the seeded overdue items
 *   scrape          metrics.render() of a registry wired as src/server.ts wires it (process
 *                   metrics, the backlog and the overdue count read from the store)
 *
 * p50/p95/max of each go to stdout; progress to stderr. The exit code is non-zero when the count
 * is wrong.
 *
 *   npm run bench:metrics-scrape                                  both stores, 1,000,000 items, 100,000 New
 *   npm run bench:metrics-scrape -- --store sqlite --new 500000   25,000 overdue
 */
import { availableParallelism, cpus, loadavg } from "node:os";
import Database from "better-sqlite3";
import pg from "pg";
import { createMetrics } from "../src/metrics.ts";
import { OPERATOR_READS_SQL } from "../src/store/core/sql-operator-reads.ts";
import { openPostgresStore } from "../src/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import type { Store } from "../src/store/store.ts";
import { parseSeededStoreOptions, type SeededStoreOptions } from "./lib/seeded-store-options.ts";
import { expectedDeadlines, plan, seedPostgres, seedSqlite, type Plan } from "./lib/operator-reads-seed.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:metrics-scrape -- [flags]
  --store sqlite|postgres|both   stores to measure (default both)
  --items N                      stored work items (default 1000000)
  --companies N                  companies they belong to (default 1000)
  --new N                        of them New (default 100000; one in twenty overdue)
  --samples N                    timed calls per measurement (default 200)
  --postgres-url URL             PostgreSQL server (default postgres://root@127.0.0.1:5432/test)
  --keep                         keep the temp SQLite folder / PostgreSQL schema`;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

type Options = SeededStoreOptions;

/** The statement with its parameter written in, for EXPLAIN. */
const overdueSql = (now: string) => (OPERATOR_READS_SQL.overviewOverdue.text as string).replace("$1", `'${now}'`);

async function queryPlan(bench: BenchStore, now: string): Promise<string[]> {
  if (bench.kind === "sqlite") {
    const db = new Database(bench.databaseUrl.slice("sqlite:".length), { readonly: true });
    try {
      return (db.prepare(`EXPLAIN QUERY PLAN ${overdueSql(now)}`).all() as Array<{ detail: string }>).map((row) => row.detail);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: bench.databaseUrl });
  await client.connect();
  try {
    const rows = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${overdueSql(now)}`);
    return rows.rows.map((row) => row["QUERY PLAN"]);
  } finally {
    await client.end();
  }
}

interface Timing {
  p50: number;
  p95: number;
  max: number;
}

async function time(samples: number, call: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < Math.min(20, samples); i++) await call();
  const wall: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await call();
    wall.push(performance.now() - started);
  }
  wall.sort((a, b) => a - b);
  const at = (q: number) => wall[Math.min(wall.length - 1, Math.ceil(q * wall.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), max: wall.at(-1)! };
}

interface StoreRun {
  kind: "sqlite" | "postgres";
  overdue: number;
  plan: string[];
  count: Timing;
  scrape: Timing;
  ok: boolean;
}

async function runStore(kind: "sqlite" | "postgres", options: Options): Promise<StoreRun> {
  const bench = kind === "sqlite" ? sqliteBenchStore(options.keep) : await postgresBenchStore(options.postgresUrl, options.keep, "bench_scrape");
  const open = (): Promise<Store> => (kind === "sqlite" ? Promise.resolve(openSqliteStore(bench.databaseUrl.slice("sqlite:".length))) : openPostgresStore(bench.databaseUrl));
  try {
    await (await open()).close();
    const p: Plan = plan(options.items, options.companies, options.newItems);
    log(`${kind}: seeding ${p.items.toLocaleString("en")} items, ${p.newItems.toLocaleString("en")} New`);
    const seeded = kind === "sqlite" ? seedSqlite(bench.databaseUrl.slice("sqlite:".length), p) : await seedPostgres(bench.databaseUrl, p);
    if (!seeded.ok) throw new Error(`${kind}: ${seeded.name}: ${seeded.detail}`);
    // The seed's "now": its overdue items are 2 h past their deadline, the next ones 2 h ahead.
    const now = new Date(p.now * 1000).toISOString();
    const expected = expectedDeadlines(p).overdue;
    const store = await open();
    try {
      const overdue = await store.countOverdueItems(now);
      const metrics = createMetrics({ defaultMetrics: true });
      metrics.setOutboxBacklogSource(() => store.countPendingWebhookDeliveries());
      metrics.setItemsOverdueSource(() => store.countOverdueItems(now));
      const body = (await metrics.render()).body;
      const exported = Number(/^work_item_api_items_overdue (\S+)$/m.exec(body)?.[1]);
      log(`${kind}: ${overdue} overdue (seeded ${expected}, exported ${exported}); timing`);
      return {
        kind,
        overdue,
        plan: await queryPlan(bench, now),
        count: await time(options.samples, () => store.countOverdueItems(now)),
        scrape: await time(options.samples, () => metrics.render()),
        ok: overdue === expected && exported === expected,
      };
    } finally {
      await store.close();
    }
  } finally {
    await bench.cleanup();
  }
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseSeededStoreOptions(process.argv.slice(2), USAGE, { newItems: 100_000 });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const loadStart = loadavg();
  const runs: StoreRun[] = [];
  for (const kind of options.stores) runs.push(await runStore(kind, options));
  const ms = (n: number) => n.toFixed(n >= 10 ? 1 : 2);
  const load = (l: number[]) => l.map((n) => n.toFixed(2)).join(" ");
  const lines = [
    `GET /metrics with ${options.items.toLocaleString("en")} items over ${options.companies.toLocaleString("en")} companies, ${options.newItems.toLocaleString("en")} New, ${options.samples} samples each`,
    "",
    "| store | overdue items | overdue count p50 / p95 / max ms | whole scrape p50 / p95 / max ms |",
    "|---|---:|---:|---:|",
    ...runs.map((r) => `| ${r.kind} | ${r.overdue.toLocaleString("en")} | ${ms(r.count.p50)} / ${ms(r.count.p95)} / ${ms(r.count.max)} | ${ms(r.scrape.p50)} / ${ms(r.scrape.p95)} / ${ms(r.scrape.max)} |`),
    "",
    ...runs.flatMap((r) => [`${r.kind} plan of overview_overdue:`, ...r.plan.map((line) => `    ${line}`)]),
    "",
    `- Machine: ${cpus()[0]?.model ?? "unknown"}, ${availableParallelism()} cores, Node ${process.version}; load average ${load(loadStart)} at the start, ${load(loadavg())} at the end`,
    ...runs.map((r) => `- ${r.ok ? "PASS" : "FAIL"} ${r.kind}: the count and the exported gauge equal the seeded overdue items`),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  return runs.every((r) => r.ok) ? 0 : 1;
}

process.exitCode = await main();
