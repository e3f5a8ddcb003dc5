/**
 * The data of `npm run bench:operator-reads`: a million items in the mix its header describes,
 * seeded with bulk SQL straight into the real schema of either store, with the per-company
 * counters the store keeps, checked against a count of the items afterwards.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { countSeededItems, PRELOAD_REQUEST } from "./stores.ts";

export const PER_BATCH = 100;
const HISTORY_DAYS = 30;
const FAILED_WITHIN_DAYS = 7;
const NEW_PER_OPEN_BATCH = 2;
const SUBMITTED_SHARE = 0.002;
const DAY_S = 86_400;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/* The seeded data: ids and counts of each part, shared by both stores' SQL. */

export interface Plan {
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

export function plan(items: number, companies: number, newItems: number): Plan {
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
export function expectedDeadlines(p: Plan): { overdue: number; next: Array<{ deadlineAt: string; unsubmitted: number; companies: number }>; submittedLastHour: number } {
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

export interface Check {
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

export const progress = (p: Plan, done: number) => log(`seeded ${done.toLocaleString("en")} of ${p.items.toLocaleString("en")} items (${Math.round((done * 100) / p.items)}%)`);

/** Seeds the SQLite file (the store closed), one transaction per step with its items' counts. */
export function seedSqlite(path: string, p: Plan): Check {
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
export async function seedPostgres(databaseUrl: string, p: Plan): Promise<Check> {
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

