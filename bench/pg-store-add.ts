/**
 * Store-level throughput of appends on PostgreSQL: the PostgreSQL store (group commit) against a
 * plain pool that runs one transaction per append with the same rules (insert-or-select the
 * Open batch FOR UPDATE, roll over when full, insert the item, bump the count).
 *
 *   npx tsx bench/pg-store-add.ts [--items 5000] [--concurrency 64] [--companies 1]
 *
 * Uses TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and a throwaway schema.
 */
import { parseArgs } from "node:util";
import pg from "pg";
import { openPostgresStore } from "../src/store/postgres/postgres-store.ts";
import type { Store } from "../src/store/store.ts";
import type { NewWorkItem } from "../src/store/store.ts";

const { values } = parseArgs({ options: { items: { type: "string", default: "5000" }, concurrency: { type: "string", default: "64" }, companies: { type: "string", default: "1" } } });
const ITEMS = Number(values.items);
const CONCURRENCY = Number(values.concurrency);
const COMPANIES = Number(values.companies);
const BASE = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const request = { customerReference: "bench", productName: { sendValue: "RUNDVEEMEST" }, plannedLoad: 31.5, exportDate: "2026-12-01T08:00:00Z" };
const itemFor = (i: number): NewWorkItem => ({
  companyId: 1 + (i % COMPANIES),
  workType: "AuthorityRvdm",
  customerReference: `bench-${i}`,
  documentReference: null,
  webhookUrl: null,
  request,
  batchMaxItems: 1000,
});

/** Runs `add` for ITEMS items with CONCURRENCY calls in flight; returns items per second. */
async function drive(add: (item: NewWorkItem) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ITEMS) await add(itemFor(next++));
    }),
  );
  return ITEMS / ((performance.now() - started) / 1000);
}

async function plainPoolAdd(pool: pg.Pool, item: NewWorkItem): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    let batch: { work_batch_id: string; item_count: number } | undefined;
    for (;;) {
      batch = (await client.query({ name: "b_sel", text: "SELECT work_batch_id, item_count FROM work_batches WHERE company_id = $1 AND work_type = $2 AND status = 'Open' FOR UPDATE", values: [item.companyId, item.workType] })).rows[0];
      if (batch && batch.item_count < item.batchMaxItems) break;
      if (batch) await client.query({ name: "b_close", text: "UPDATE work_batches SET status = 'Closed', closed_at = now() WHERE company_id = $1 AND work_batch_id = $2", values: [item.companyId, batch.work_batch_id] });
      batch = (await client.query({ name: "b_ins", text: "INSERT INTO work_batches (company_id, work_type, status, created_at) VALUES ($1, $2, 'Open', now()) ON CONFLICT (company_id, work_type) WHERE status = 'Open' DO NOTHING RETURNING work_batch_id, item_count", values: [item.companyId, item.workType] })).rows[0];
      if (batch) break;
    }
    await client.query({
      name: "i_ins",
      text: "INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, webhook_url, request, created_at, updated_at) VALUES ($1, $2, $3, 'New', $4, $5, $6, $7, now(), now()) RETURNING work_item_id",
      values: [item.companyId, batch.work_batch_id, item.workType, item.customerReference, item.documentReference, item.webhookUrl, JSON.stringify(item.request)],
    });
    await client.query({ name: "b_cnt", text: "UPDATE work_batches SET item_count = item_count + 1 WHERE company_id = $1 AND work_batch_id = $2", values: [item.companyId, batch.work_batch_id] });
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function withSchema(run: (url: string) => Promise<number>): Promise<number> {
  const admin = new pg.Client(BASE);
  await admin.connect();
  const schema = `wia_bench_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    return await run(`${BASE}${BASE.includes("?") ? "&" : "?"}options=-c%20search_path%3D${schema}`);
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

async function setUp(url: string): Promise<Store> {
  const store = await openPostgresStore(url);
  for (let c = 1; c <= COMPANIES; c++) await store.createCompany({ companyId: c, name: `Bench ${c}` });
  return store;
}

const plain = await withSchema(async (url) => {
  await (await setUp(url)).close();
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  try {
    return await drive((item) => plainPoolAdd(pool, item));
  } finally {
    await pool.end();
  }
});
const grouped = await withSchema(async (url) => {
  const store = await setUp(url);
  try {
    return await drive((item) => store.addWorkItem(item));
  } finally {
    await store.close();
  }
});
console.log(
  JSON.stringify({ items: ITEMS, concurrency: CONCURRENCY, companies: COMPANIES, plainPoolPerSecond: Math.round(plain), groupCommitPerSecond: Math.round(grouped), ratio: Number((grouped / plain).toFixed(1)) }),
);
