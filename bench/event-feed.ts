/**
 * `npm run bench:events -- [flags]`: GET /api/Events with a million stored events (SPEC §11.2).
 *
 * On a fresh SQLite store (a temp folder; the server's own migrations made it): one company and
 * its API key through the store API, then `--events` events of that company seeded with bulk
 * SQL (a recursive CTE, a realistic work item view as each event's data, four events per item,
 * numbered 1..N as the feed numbers them), all created 40 days ago so the sweep has work. Then
 * the server (`ROLE=api`, the production build's entry through tsx, pinned to core 0 when taskset
 * is there) is driven over loopback HTTP by wrk (or autocannon) on the other core, one scenario
 * after another, each for `--duration` seconds at `--connections` connections:
 *
 *   page     a page of 100 from cursors spread over the whole feed
 *   tail     a poll with the newest cursor: the empty page of a reader that has caught up
 *   type     a page of 100 `workitem.failed` events (a quarter of the feed) from spread cursors
 *   item     one item's events (`workItemId`), items spread over the feed
 *
 * Reported per scenario: requests/s, p50, p99, max, the server's CPU time per request (which
 * other work on a shared machine barely moves, unlike the latencies) and errors; the target is
 * p99 ≤ 5 ms for a page (docs/performance.md). Then, with the server stopped, the retention sweep's statement:
 * the time of one `deleteExpiredEvents` of EVENT_SWEEP_CHUNK_ROWS (100) events at this size, the
 * time that statement holds SQLite's write lock, which intake also takes.
 *
 *   npm run bench:events                         1,000,000 events, 5 s per scenario, 1 connection
 *   npm run bench:events -- --connections 8 --duration 3
 *
 * Nothing is written to bench/results/; the table goes to stdout, progress to stderr.
 */
import { availableParallelism, loadavg } from "node:os";
import Database from "better-sqlite3";
import { freePort, startServer as startServerProcess } from "../scripts/lib/processes.ts";
import { createKey } from "../src/admin/admin.ts";
import { EVENT_SWEEP_CHUNK_ROWS } from "../src/retention/event-sweep.ts";
import { openSqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import { encodeEventCursor } from "../src/surfaces/events/list-events.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { runLoad, type LoaderName, type LoadResult } from "./lib/load.ts";
import { choosePinning, cpuSecondsOf } from "./lib/processes.ts";
import type { RequestTemplate } from "./lib/routes.ts";
import { login, serverEnv } from "./lib/setup.ts";
import { PRELOAD_REQUEST, sqliteBenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:events -- [flags]
  --events N            stored events of the company (default 1000000)
  --duration S          seconds per scenario (default 5)
  --connections N       concurrent connections (default 1: the latency of one request)
  --loader NAME         wrk or autocannon (default wrk)
  --keep                keep the temp SQLite folder
Takes about 1 minute on a 2-core machine at the defaults (seeding ~20-30 s).`;

const COMPANY_ID = 1;
const EVENTS_PER_ITEM = 4;
/** The event types in the order each seeded item goes through them. */
const ITEM_EVENTS = ["workitem.deadline_at_risk", "workitem.submitted", "workitem.succeeded", "workitem.failed"];
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function parseOptions(argv: string[]) {
  const values = benchFlags(argv, USAGE, {
    events: { type: "string", default: "1000000" },
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "1" },
    loader: { type: "string", default: "wrk" },
    keep: { type: "boolean", default: false },
  });
  if (values.loader !== "wrk" && values.loader !== "autocannon") throw new Error(`--loader: wrk or autocannon, got ${JSON.stringify(values.loader)}`);
  return {
    events: wholeNumber("events", values.events),
    duration: wholeNumber("duration", values.duration),
    connections: wholeNumber("connections", values.connections),
    loader: values.loader as LoaderName,
    keep: values.keep,
  };
}

/** A work item view as the feed stores it, with `@ID@` for the item id. */
function viewTemplate(): string {
  const at = "2026-10-01T08:00:00.000Z";
  return JSON.stringify({
    workItemId: "@ID@",
    workBatchId: 17,
    workType: "AuthorityRvdm",
    status: "Successful",
    customerReference: "HIST-@ID@",
    documentReference: "DOC-HIST",
    webhookUrl: "https://integrator.example/hooks/work-items",
    request: JSON.parse(PRELOAD_REQUEST) as unknown,
    result: { registrationNumber: "RVDM-2026-4KX9QZ1M0P", registeredAt: at },
    error: null,
    attempts: 0,
    authority: { applicationNumber: "RVDM-A-7Q2M9K4XWD", registrationNumber: "RVDM-2026-4KX9QZ1M0P", submittedAt: at, decidedAt: at },
    deadlineAt: "2026-02-26T11:00:00.000Z",
    createdAt: at,
    updatedAt: at,
    completedAt: at,
  }).replace('"@ID@"', "@ID@");
}

/** `total` events of the company, numbered 1..total, four per item, in one transaction per 100,000. */
function seedEvents(path: string, total: number): number {
  const db = new Database(path);
  // Setup, not a measured write: no fsync per transaction.
  db.pragma("synchronous = OFF");
  const createdAt = new Date(Date.now() - 40 * 86_400_000).toISOString();
  const insert = db.prepare(
    `WITH RECURSIVE seq(n) AS (SELECT :from UNION ALL SELECT n + 1 FROM seq WHERE n < :to)
     INSERT INTO events (company_id, position, event_id, event_type, work_item_id, created_at, data)
     SELECT :company_id, n, 'msg_' || printf('%032x', n),
            CASE (n - 1) % ${EVENTS_PER_ITEM} ${ITEM_EVENTS.map((type, i) => `WHEN ${i} THEN '${type}'`).join(" ")} END,
            (n - 1) / ${EVENTS_PER_ITEM} + 1, :created_at, replace(:view, '@ID@', (n - 1) / ${EVENTS_PER_ITEM} + 1)
       FROM seq`,
  );
  const view = viewTemplate();
  const started = performance.now();
  for (let from = 1; from <= total; from += 100_000) {
    const to = Math.min(total, from + 99_999);
    db.transaction(() => insert.run({ from, to, company_id: COMPANY_ID, created_at: createdAt, view }))();
    log(`seeded ${to.toLocaleString("en")} events`);
  }
  db.prepare("INSERT INTO event_sequences (company_id, last_position) VALUES (?, ?)").run(COMPANY_ID, total);
  // Into the database file: a server reading past a WAL of a million rows, or checkpointing it
  // inside the first timed write, would measure the seeding.
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return performance.now() - started;
}

/** `count` values spread evenly over 1..max. */
const spread = (count: number, max: number) => Array.from({ length: count }, (_, i) => Math.max(1, Math.floor(((i + 0.5) * max) / count)));

function scenarios(total: number, token: string): Array<{ name: string; requests: RequestTemplate[] }> {
  const get = (path: string): RequestTemplate => ({ method: "GET", path, headers: { authorization: `Bearer ${token}` } });
  const items = Math.ceil(total / EVENTS_PER_ITEM);
  return [
    { name: "page (limit 100, spread cursors)", requests: spread(200, total - 100).map((p) => get(`/api/Events?after=${encodeEventCursor(p)}`)) },
    { name: "tail (caught up, empty page)", requests: [get(`/api/Events?after=${encodeEventCursor(total)}`)] },
    { name: "type=workitem.failed (limit 100)", requests: spread(200, total - 400).map((p) => get(`/api/Events?type=workitem.failed&after=${encodeEventCursor(p)}`)) },
    { name: "workItemId (4 events)", requests: spread(200, items).map((id) => get(`/api/Events?workItemId=${id}`)) },
  ];
}

/**
 * Times single sweep statements of EVENT_SWEEP_CHUNK_ROWS on the full store, as the worker runs
 * them (on SQLite the statement runs on this thread: its CPU time is this process's).
 */
async function timeSweepChunks(path: string, chunks: number): Promise<{ wall: number[]; cpu: number[] }> {
  const store = openSqliteStore(path);
  try {
    // One add through intake first: it waits for the intake writer thread to be up, whose start
    // would otherwise fall into the first measurements.
    const warm = await store.addWorkItem({ companyId: COMPANY_ID, workType: "AuthorityRvdm", customerReference: "warm-up", documentReference: null, webhookUrl: null, request: {}, batchMaxItems: 1000 });
    if (warm.kind !== "created") throw new Error(`the warm-up add answered ${warm.kind}`);
    const createdBefore = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < chunks; i++) {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const deleted = await store.deleteExpiredEvents({ companyId: COMPANY_ID, createdBefore, limit: EVENT_SWEEP_CHUNK_ROWS });
      const used = process.cpuUsage(cpuBefore);
      wall.push(performance.now() - started);
      cpu.push((used.user + used.system) / 1000);
      if (deleted !== EVENT_SWEEP_CHUNK_ROWS) throw new Error(`the sweep deleted ${deleted}, not ${EVENT_SWEEP_CHUNK_ROWS}`);
    }
    return { wall: wall.sort((a, b) => a - b), cpu: cpu.sort((a, b) => a - b) };
  } finally {
    await store.close();
  }
}

const ms = (value: number) => value.toFixed(2);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const store = sqliteBenchStore(options.keep);
  const path = store.databaseUrl.slice("sqlite:".length);
  const pinning = choosePinning();
  try {
    // The server's own migrations, a company and its key.
    const opened = openSqliteStore(path);
    await opened.createCompany({ companyId: COMPANY_ID, name: "Event feed bench" });
    const key = await createKey(opened, { companyId: COMPANY_ID, name: "bench" });
    await opened.close();
    const seedMs = seedEvents(path, options.events);
    log(`seeded ${options.events.toLocaleString("en")} events in ${(seedMs / 1000).toFixed(1)} s (${store.description})`);

    const port = await freePort();
    const server = await startServerProcess(serverEnv(store), { launcher: "tsx", port, readyBy: "healthz", readyTimeoutMs: 30_000, cpus: pinning?.server });
    const results: Array<{ name: string; result: LoadResult; cpuMsPerRequest: number }> = [];
    try {
      const baseUrl = `http://127.0.0.1:${port}`;
      const token = await login(baseUrl, key.apiKey, key.secret);
      for (const scenario of scenarios(options.events, token)) {
        // A short warm-up per scenario: statements prepared, pages cached.
        await runLoad(options.loader, { baseUrl, requests: scenario.requests, connections: options.connections, durationSeconds: 1, countAnswers: false, cpus: pinning?.load });
        log(`${scenario.name}: ${options.duration} s at ${options.connections} connection(s)`);
        const cpuBefore = cpuSecondsOf(server.pid) ?? NaN;
        const result = await runLoad(options.loader, {
          baseUrl,
          requests: scenario.requests,
          connections: options.connections,
          durationSeconds: options.duration,
          countAnswers: false,
          cpus: pinning?.load,
        });
        const cpuMsPerRequest = (((cpuSecondsOf(server.pid) ?? NaN) - cpuBefore) * 1000) / Math.max(1, result.requests);
        results.push({ name: scenario.name, result, cpuMsPerRequest });
      }
    } finally {
      await server.stop();
    }
    const sweep = await timeSweepChunks(path, 20);

    const lines = [
      `Event feed: ${options.events.toLocaleString("en")} stored events of one company, SQLite, ${options.connections} connection(s), ${options.duration} s per scenario, ${results[0]?.result.loader ?? options.loader}${pinning ? ", server on core 0, load on the other" : ""}`,
      "",
      "| scenario | requests/s | p50 ms | p99 ms | max ms | server CPU ms/request | errors |",
      "|---|---:|---:|---:|---:|---:|---:|",
      ...results.map(({ name, result: r, cpuMsPerRequest }) =>
        `| ${name} | ${Math.round(r.requestsPerSecond)} | ${ms(r.latencyMs.p50)} | ${ms(r.latencyMs.p99)} | ${ms(r.latencyMs.max)} | ${ms(cpuMsPerRequest)} | ${r.non2xx + r.socketErrors + r.timeouts} |`,
      ),
      "",
      `Sweep statement (${EVENT_SWEEP_CHUNK_ROWS} expired events, synchronous=FULL), 20 in a row: wall median ${ms(sweep.wall[10]!)} ms, max ${ms(sweep.wall.at(-1)!)} ms; CPU median ${ms(sweep.cpu[10]!)} ms`,
      `Machine load (1-minute average) at the end: ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
      `Target: p99 ≤ 5 ms for a page: ${results[0] && results[0].result.latencyMs.p99 <= 5 ? "met" : "NOT met"}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (results.some(({ result: r }) => r.non2xx + r.socketErrors + r.timeouts > 0)) process.exitCode = 1;
  } finally {
    if (!options.keep) await store.cleanup();
    else log(`kept ${store.description}`);
  }
}

await main();
