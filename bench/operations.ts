/**
 * `npm run bench:operations -- [flags]`: the operators' reads across companies (SPEC §12) with a
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
 *   deep page       a page of 50 from a cursor (beforeWorkItemId spread over all items)
 *
 * Targets (SPEC §12): overview p95 ≤ 100 ms, a WorkItems page p95 ≤ 50 ms. The measuring loop
 * (`sample`) only knows a probe as a function to call; the HTTP probes then time the same reads
 * through the operator API of a server process on the seeded store.
 * Writes bench/results/<timestamp>-operations.{json,md}; the table goes to stdout, progress to
 * stderr. The exit code is non-zero only when a check fails (a missed target is reported).
 *
 *   npm run bench:operations                                   both stores, 1,000,000 items
 *   npm run bench:operations -- --store sqlite --items 100000 --samples 50
 *   npm run bench:operations -- --new 100000                   a crunch: 100,000 items waiting
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { join, relative } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { freePort, startServer } from "../scripts/lib/processes.ts";
import { createOperatorAccount, issueOperatorToken } from "../src/operators/accounts.ts";
import { buildOverview, NEXT_DEADLINES } from "../src/operators/overview.ts";
import { openPostgresStore } from "../src/store/postgres/postgres-store.ts";
import { openSqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import type { DeadlineOverview, Store } from "../src/store/store.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { ROOT, serverEnv } from "./lib/setup.ts";
import { countSeededItems, postgresBenchStore, PRELOAD_REQUEST, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:operations -- [flags]
  --store sqlite|postgres|both   stores to measure (default both)
  --items N                      stored work items (default 1000000)
  --companies N                  companies they belong to (default 1000)
  --new N                        of them New, waiting to be filed (default 400; e.g. 100000 for a crunch)
  --samples N                    timed calls per probe (default 200)
  --postgres-url URL             PostgreSQL server (default postgres://root@127.0.0.1:5432/test)
  --keep                         keep the temp SQLite folder / PostgreSQL schema
Takes 2–3 minutes at the defaults on a 2-core machine (most of it seeding).`;

const PAGE_SIZE = 50;
const PER_BATCH = 100;
const HISTORY_DAYS = 30;
const FAILED_WITHIN_DAYS = 7;
const NEW_PER_OPEN_BATCH = 2;
const SUBMITTED_SHARE = 0.002;
const TARGETS = { overview: 100, page: 50 } as const;
const DAY_S = 86_400;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

interface Options {
  stores: Array<"sqlite" | "postgres">;
  items: number;
  companies: number;
  newItems: number;
  samples: number;
  postgresUrl: string;
  keep: boolean;
}

function parseOptions(argv: string[]): Options {
  const values = benchFlags(argv, USAGE, {
    store: { type: "string", default: "both" },
    items: { type: "string", default: "1000000" },
    companies: { type: "string", default: "1000" },
    new: { type: "string", default: "400" },
    samples: { type: "string", default: "200" },
    "postgres-url": { type: "string", default: "postgres://root@127.0.0.1:5432/test" },
    keep: { type: "boolean", default: false },
  });
  const store = values.store;
  const stores: Options["stores"] | undefined = store === "both" ? ["sqlite", "postgres"] : store === "sqlite" || store === "postgres" ? [store] : undefined;
  if (!stores) throw new Error(`--store: sqlite, postgres or both, got ${JSON.stringify(store)}`);
  const options: Options = {
    stores,
    items: wholeNumber("items", values.items),
    companies: wholeNumber("companies", values.companies),
    newItems: wholeNumber("new", values.new),
    samples: wholeNumber("samples", values.samples),
    postgresUrl: values["postgres-url"],
    keep: values.keep,
  };
  if (options.items < 10 * PER_BATCH) throw new Error(`--items must be at least ${10 * PER_BATCH}`);
  if (options.newItems > options.items / 2) throw new Error("--new must be at most half of --items");
  return options;
}

// ---------------------------------------------------------------------------------------------
// The seeded data: ids and counts of each part, shared by both stores' SQL.

interface Plan {
  items: number;
  companies: number;
  /** Items 1..history in Completed batches 1..historyBatches. */
  history: number;
  historyBatches: number;
  /** Submitted items after them, in Processing batches of PER_BATCH. */
  submittedBatches: number;
  submitted: number;
  /** New items last, newPerBatch in the Open batch of each of companies 1..openBatches (the last one may hold fewer). */
  openBatches: number;
  newPerBatch: number;
  newItems: number;
  /** Unix seconds: the history starts here; the run's "now" is start + HISTORY_DAYS days. */
  start: number;
  now: number;
}

function plan(items: number, companies: number, newItems: number): Plan {
  const newPerBatch = Math.max(NEW_PER_OPEN_BATCH, Math.ceil(newItems / companies));
  const openBatches = Math.ceil(newItems / newPerBatch);
  const submittedBatches = Math.max(1, Math.round((items * SUBMITTED_SHARE) / PER_BATCH));
  const submitted = submittedBatches * PER_BATCH;
  const history = items - submitted - newItems;
  const now = Math.floor(Date.now() / 1000);
  return { items, companies, history, historyBatches: Math.ceil(history / PER_BATCH), submittedBatches, submitted, openBatches, newPerBatch, newItems, start: now - HISTORY_DAYS * DAY_S, now };
}

/** What differs between the two stores' seeding SQL: a timestamp from Unix seconds, a JSON object. */
interface Dialect {
  ts(seconds: string): string;
  json(pairs: string): string;
  array(elements: string): string;
}

const SQLITE: Dialect = {
  ts: (seconds) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${seconds}, 'unixepoch')`,
  json: (pairs) => `json_object(${pairs})`,
  array: (elements) => `json_array(${elements})`,
};
const POSTGRES: Dialect = {
  ts: (seconds) => `to_timestamp(${seconds})`,
  json: (pairs) => `json_build_object(${pairs})`,
  array: (elements) => `json_build_array(${elements})`,
};

const ITEM_COLUMNS =
  "work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url, request, result, error, " +
  "attempts, created_at, updated_at, completed_at, application_number, registration_number, submitted_at, decided_at, deadline_at";

/**
 * History items from..to: SELECT list over a row source giving `n`. Item n is in batch
 * (n-1)/100+1 of company ((n-1)/100 mod companies)+1, created in order over 30 days.
 */
function historySelect(d: Dialect, p: Plan, request: string): string {
  const created = `(${p.start} + (n * ${(HISTORY_DAYS - 1) * DAY_S}) / ${p.history})`;
  const status = "CASE WHEN n % 50 = 0 THEN 'Failed' WHEN n % 200 = 7 THEN 'Cancelled' ELSE 'Successful' END";
  // Failures were decided within the last 7 days, spread (7919 is prime).
  const failedAt = `(${p.now} - (n * 7919) % ${FAILED_WITHIN_DAYS * DAY_S})`;
  const completed = `CASE WHEN n % 50 = 0 THEN ${failedAt} WHEN n % 200 = 7 THEN ${created} + 600 ELSE ${created} + 7200 END`;
  return `SELECT n, ((n - 1) / ${PER_BATCH}) % ${p.companies} + 1, (n - 1) / ${PER_BATCH} + 1, 'AuthorityRvdm', ${status},
      'HIST-' || n, 'DOC-' || n, 'https://integrator.example/hooks/work-items', ${request},
      CASE WHEN n % 50 <> 0 AND n % 200 <> 7 THEN ${d.json(`'registrationNumber', 'RVDM-2026-' || n, 'registeredAt', ${d.ts(`${created} + 7200`)}`)} END,
      CASE WHEN n % 50 = 0 THEN ${d.json(`'code', 'AUTHORITY_REJECTED', 'message', 'The authority rejected the application', 'details', ${d.array(d.json("'field', 'exportDate', 'message', 'lies in the past'"))}`)} END,
      CASE WHEN n % 200 = 7 THEN 0 ELSE 1 END,
      ${d.ts(created)}, ${d.ts(completed)}, ${d.ts(completed)},
      CASE WHEN n % 200 <> 7 THEN 'RVDM-A-' || n END,
      CASE WHEN n % 50 <> 0 AND n % 200 <> 7 THEN 'RVDM-2026-' || n END,
      CASE WHEN n % 200 <> 7 THEN ${d.ts(`${created} + 1800`)} END,
      CASE WHEN n % 200 <> 7 THEN ${d.ts(completed)} END,
      ${d.ts(`${created} + 3 * ${DAY_S}`)}`;
}

/**
 * The deadline of the j-th New item (from 0), in seconds after the plan's now: one in twenty is
 * overdue, thirteen are due in 2 h, the other six a day, two … six days after that.
 * `newDeadlineSql` is the same rule in SQL over `j`.
 */
const newDeadline = (j: number) => (j % 20 === 0 ? -7200 : j % 20 <= 13 ? 7200 : 7200 + ((j % 20) - 13) * DAY_S);
const newDeadlineSql = (j: string) => `CASE WHEN ${j} % 20 = 0 THEN -7200 WHEN ${j} % 20 <= 13 THEN 7200 ELSE 7200 + (${j} % 20 - 13) * ${DAY_S} END`;
/** Submitted items are filed 600 s after being accepted, accepted over the day before now minus 1,200 s. */
const submittedCreated = (i: number, p: Plan) => p.now - DAY_S + Math.floor((i * (DAY_S - 1200)) / p.submitted);

/** Submitted items (after the history) and New items (last), one SELECT over `n`. */
function recentSelect(d: Dialect, p: Plan, request: string): string {
  const firstNew = p.history + p.submitted + 1;
  const isNew = `n >= ${firstNew}`;
  const j = `(n - ${firstNew})`;
  // Submitted: batch history+1.., companies taking turns; New: companies 1..openBatches, newPerBatch each.
  const submittedBatch = `${p.historyBatches} + (n - ${p.history} - 1) / ${PER_BATCH} + 1`;
  const newCompany = `${j} / ${p.newPerBatch} + 1`;
  const company = `CASE WHEN ${isNew} THEN ${newCompany} ELSE (${submittedBatch} - 1) % ${p.companies} + 1 END`;
  const batch = `CASE WHEN ${isNew} THEN ${p.historyBatches + p.submittedBatches} + ${newCompany} ELSE ${submittedBatch} END`;
  const created = `CASE WHEN ${isNew} THEN ${p.now} - 3600 + (${j} * 3600) / ${p.newItems} ELSE ${p.now} - ${DAY_S} + ((n - ${p.history}) * ${DAY_S - 1200}) / ${p.submitted} END`;
  const deadline = `CASE WHEN ${isNew} THEN ${p.now} + ${newDeadlineSql(j)} ELSE ${created} + 3 * ${DAY_S} END`;
  return `SELECT n, ${company}, ${batch}, 'AuthorityRvdm', CASE WHEN ${isNew} THEN 'New' ELSE 'Submitted' END,
      'RECENT-' || n, 'DOC-' || n, 'https://integrator.example/hooks/work-items', ${request}, NULL, NULL,
      CASE WHEN ${isNew} THEN 0 ELSE 1 END, ${d.ts(created)}, ${d.ts(created)}, NULL,
      CASE WHEN ${isNew} THEN NULL ELSE 'RVDM-A-' || n END, NULL,
      CASE WHEN ${isNew} THEN NULL ELSE ${d.ts(`${created} + 600`)} END, NULL, ${d.ts(deadline)}`;
}

/** What the Overview should say of the seeded queue at the plan's now (SPEC §14). */
function expectedDeadlines(p: Plan): { overdue: number; next: Array<{ deadlineAt: string; unsubmitted: number; companies: number }>; submittedLastHour: number } {
  let overdue = 0;
  const due = new Map<number, { unsubmitted: number; companies: Set<number> }>();
  for (let j = 0; j < p.newItems; j++) {
    const offset = newDeadline(j);
    if (offset < 0) {
      overdue += 1;
      continue;
    }
    const entry = due.get(offset) ?? { unsubmitted: 0, companies: new Set<number>() };
    entry.unsubmitted += 1;
    entry.companies.add(Math.floor(j / p.newPerBatch));
    due.set(offset, entry);
  }
  const next = [...due.entries()]
    .sort(([a], [b]) => a - b)
    .slice(0, 5)
    .map(([offset, entry]) => ({ deadlineAt: new Date((p.now + offset) * 1000).toISOString(), unsubmitted: entry.unsubmitted, companies: entry.companies.size }));
  let submittedLastHour = 0;
  for (let i = 1; i <= p.submitted; i++) if (submittedCreated(i, p) + 600 >= p.now - 3600) submittedLastHour += 1;
  return { overdue, next, submittedLastHour };
}

/** Every batch: SELECT over `k` (its id) in the order of BATCH_COLUMNS; the caller adds the FROM. */
function batchSelect(d: Dialect, p: Plan): string {
  const lastHistory = p.historyBatches;
  const lastSubmitted = p.historyBatches + p.submittedBatches;
  const historyCreated = `${p.start} + ((k - 1) * ${PER_BATCH} * ${(HISTORY_DAYS - 1) * DAY_S}) / ${p.history}`;
  const historyCount = `CASE WHEN k = ${lastHistory} THEN ${p.history - (p.historyBatches - 1) * PER_BATCH} ELSE ${PER_BATCH} END`;
  return `SELECT k,
      CASE WHEN k > ${lastSubmitted} THEN k - ${lastSubmitted} ELSE (k - 1) % ${p.companies} + 1 END,
      'AuthorityRvdm',
      CASE WHEN k > ${lastSubmitted} THEN 'Open' WHEN k > ${lastHistory} THEN 'Processing' ELSE 'Completed' END,
      CASE WHEN k = ${lastSubmitted + p.openBatches} THEN ${p.newItems - (p.openBatches - 1) * p.newPerBatch} WHEN k > ${lastSubmitted} THEN ${p.newPerBatch} WHEN k > ${lastHistory} THEN ${PER_BATCH} ELSE ${historyCount} END,
      CASE WHEN k > ${lastSubmitted} THEN ${d.ts(`${p.now} - 3600`)} WHEN k > ${lastHistory} THEN ${d.ts(`${p.now} - ${DAY_S}`)} ELSE ${d.ts(historyCreated)} END,
      CASE WHEN k > ${lastSubmitted} THEN NULL WHEN k > ${lastHistory} THEN ${d.ts(`${p.now} - ${DAY_S} + 60`)} ELSE ${d.ts(`${historyCreated} + 60`)} END,
      CASE WHEN k > ${lastHistory} THEN NULL ELSE ${d.ts(`${historyCreated} + 7200`)} END`;
}

const BATCH_COLUMNS = "work_batch_id, company_id, work_type, status, item_count, created_at, closed_at, completed_at";
const batchCount = (p: Plan) => p.historyBatches + p.submittedBatches + p.openBatches;

/** The history in ten ranges of item ids (progress every 10%); the recent items are one more step. */
const historySteps = (p: Plan) => Array.from({ length: 10 }, (_, i) => ({ from: Math.floor((p.history * i) / 10) + 1, to: Math.floor((p.history * (i + 1)) / 10) }));

/** Counter rows that differ from a GROUP BY count of the items, both ways (0 when they agree); the counters leave New out. */
const COUNTER_MISMATCHES = `SELECT COUNT(*) AS n FROM (
    SELECT * FROM (SELECT company_id, status, COUNT(*) AS item_count FROM work_items WHERE status <> 'New' GROUP BY company_id, status
                   EXCEPT SELECT company_id, status, item_count FROM company_item_counts WHERE item_count <> 0) a
    UNION ALL
    SELECT * FROM (SELECT company_id, status, item_count FROM company_item_counts WHERE item_count <> 0
                   EXCEPT SELECT company_id, status, COUNT(*) FROM work_items WHERE status <> 'New' GROUP BY company_id, status) b) d`;
const COUNTER_TOTAL = "SELECT SUM(item_count) AS n FROM company_item_counts";

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

function counterCheck(mismatches: number, total: number, p: Plan): Check {
  return {
    name: "company_item_counts equal a GROUP BY count of the items not New",
    ok: mismatches === 0 && total === p.items - p.newItems,
    detail: `${mismatches} (company, status) rows differ; the counters add up to ${total.toLocaleString("en")} of the ${(p.items - p.newItems).toLocaleString("en")} items not New`,
  };
}

const progress = (p: Plan, done: number) => log(`seeded ${done.toLocaleString("en")} of ${p.items.toLocaleString("en")} items (${Math.round((done * 100) / p.items)}%)`);

/** Seeds the SQLite file (the store closed), one transaction per step with its items' counts. */
function seedSqlite(path: string, p: Plan): Check {
  const db = new Database(path);
  try {
    // Setup, not a measured write: no fsync per transaction.
    db.pragma("synchronous = OFF");
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE seq(c) AS (SELECT 1 UNION ALL SELECT c + 1 FROM seq WHERE c < ${p.companies})
         INSERT INTO companies (company_id, name, created_at) SELECT c, 'Company ' || c, ${SQLITE.ts(String(p.start - DAY_S))} FROM seq`,
      ).run();
      db.prepare(
        `WITH RECURSIVE seq(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM seq WHERE k < ${batchCount(p)})
         INSERT INTO work_batches (${BATCH_COLUMNS}) ${batchSelect(SQLITE, p)} FROM seq`,
      ).run();
    })();
    const range = (select: string) =>
      db.prepare(`WITH RECURSIVE seq(n) AS (SELECT CAST(:from AS INTEGER) UNION ALL SELECT n + 1 FROM seq WHERE n < :to) INSERT INTO work_items (${ITEM_COLUMNS}) ${select} FROM seq`);
    const history = range(historySelect(SQLITE, p, ":request"));
    for (const { from, to } of historySteps(p)) {
      db.transaction(() => {
        history.run({ from, to, request: PRELOAD_REQUEST });
        db.prepare(countSeededItems(from, to)).run();
      })();
      progress(p, to);
    }
    db.transaction(() => {
      range(recentSelect(SQLITE, p, ":request")).run({ from: p.history + 1, to: p.items, request: PRELOAD_REQUEST });
      db.prepare(countSeededItems(p.history + 1, p.items)).run();
    })();
    progress(p, p.items);
    const mismatches = (db.prepare(COUNTER_MISMATCHES).get() as { n: number }).n;
    const total = (db.prepare(COUNTER_TOTAL).get() as { n: number }).n;
    // Into the database file: the measured reads should not wade through a WAL of a million rows.
    db.pragma("wal_checkpoint(TRUNCATE)");
    return counterCheck(mismatches, total, p);
  } finally {
    db.close();
  }
}

/** Seeds the PostgreSQL schema, one transaction per step with its items' counts; then VACUUM ANALYZE. */
async function seedPostgres(databaseUrl: string, p: Plan): Promise<Check> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SET synchronous_commit = off");
    await client.query(
      `INSERT INTO companies (company_id, name, created_at) SELECT c, 'Company ' || c, ${POSTGRES.ts(String(p.start - DAY_S))} FROM generate_series(1, ${p.companies}) AS c`,
    );
    await client.query(`INSERT INTO work_batches (${BATCH_COLUMNS}) OVERRIDING SYSTEM VALUE ${batchSelect(POSTGRES, p)} FROM generate_series(1, ${batchCount(p)}::bigint) AS k`);
    const range = (select: string) => `INSERT INTO work_items (${ITEM_COLUMNS}) OVERRIDING SYSTEM VALUE ${select} FROM generate_series($2::bigint, $3::bigint) AS n`;
    const history = range(historySelect(POSTGRES, p, "$1::json"));
    // Each step and its counts in one transaction, as the store keeps them.
    const seedStep = async (select: string, from: number, to: number) => {
      await client.query("BEGIN");
      await client.query(select, [PRELOAD_REQUEST, from, to]);
      await client.query(countSeededItems(from, to));
      await client.query("COMMIT");
    };
    for (const { from, to } of historySteps(p)) {
      await seedStep(history, from, to);
      progress(p, to);
    }
    await seedStep(range(recentSelect(POSTGRES, p, "$1::json")), p.history + 1, p.items);
    progress(p, p.items);
    for (const [table, column] of [["work_batches", "work_batch_id"], ["work_items", "work_item_id"]]) {
      await client.query(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), (SELECT max(${column}) FROM ${table}))`);
    }
    const mismatches = Number((await client.query<{ n: string }>(COUNTER_MISMATCHES)).rows[0]!.n);
    const total = Number((await client.query<{ n: string }>(COUNTER_TOTAL)).rows[0]!.n);
    log("VACUUM ANALYZE (what autovacuum would do after such a load)");
    await client.query("VACUUM ANALYZE");
    return counterCheck(mismatches, total, p);
  } finally {
    await client.end();
  }
}

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
      (i) => ({ companyId: spread(i, 97, p.companies), limit: PAGE_SIZE }),
      (items, i) => newestFirst(items) ?? (items.every((item) => item.companyId === spread(i, 97, p.companies)) ? undefined : "an item of another company"),
    ),
    page(
      "WorkItems deep page (cursor)",
      (i) => ({ beforeWorkItemId: spread(i, 199, p.items - PAGE_SIZE) + PAGE_SIZE, limit: PAGE_SIZE }),
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
  const page = (name: string, path: (i: number) => string): Probe => ({
    name: `HTTP ${name}`,
    target: "page",
    call: (i) => get(path(i)),
    check: (answer) => {
      const items = (answer as { items?: unknown[] }).items;
      return items?.length === PAGE_SIZE ? undefined : `not a page of ${PAGE_SIZE}: ${JSON.stringify(answer).slice(0, 200)}`;
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
async function sample(probe: Probe, samples: number, warmup: number): Promise<{ stats: Stats; problem: string | undefined }> {
  let problem: string | undefined;
  for (let i = 0; i < warmup; i++) problem ??= probe.check(await probe.call(i), i);
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
        const { stats, problem } = await sample(probe, options.samples, Math.min(20, Math.max(3, Math.round(options.samples / 10))));
        checks.push({ name: `${probe.name}: the answer is right`, ok: problem === undefined, detail: problem ?? "checked on every warm-up call" });
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
  const base = `${startedAt.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}-operations`;
  const files = { json: join(resultsDir, `${base}.json`), md: join(resultsDir, `${base}.md`) };
  const report = {
    startedAt: startedAt.toISOString(),
    command: `npm run bench:operations -- ${process.argv.slice(2).join(" ")}`.trim(),
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
