/**
 * The bench's side door into the store under test: a fresh location (temp SQLite file or a
 * fresh PostgreSQL schema named by the connection string's search_path), a row count for the
 * stored-items check, and a bulk preload for the growth check. Everything here is plain SQL
 * against the tables the server's own migrations made.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";

export interface BenchStore {
  kind: "sqlite" | "postgres";
  databaseUrl: string;
  /** Shown in the report: where the data lived. */
  description: string;
  /** Folder for the server's data (generated keys); the SQLite file lives here too. */
  dataDir: string;
  countItems(): Promise<number>;
  /** Adds historic items (in completed batches of `perBatch`) until `total` items are stored. */
  preload(total: number, companyIds: number[], perBatch: number, progress: (done: number) => void): Promise<void>;
  cleanup(): Promise<void>;
}

export const PRELOAD_REQUEST = JSON.stringify({
  customerReference: "HIST",
  documentReference: "DOC-HIST",
  productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest, vloeibaar" },
  destinationCountry: { sendValue: "DE", documentValue: "Duitsland" },
  destinationRegion: { sendValue: "NW", documentValue: "Nordrhein-Westfalen" },
  exportDate: "2026-03-01T08:00:00Z",
  senderChamberOfCommerceNo: { sendValue: "12345678" },
  senderDomestic: { sendValue: "true" },
  receiverChamberOfCommerceNo: { sendValue: "87654321" },
  receiverDomestic: { sendValue: "false" },
  requestNo: { sendValue: "REQ-000042" },
  plannedLoad: 31.5,
  certificateLanguage: { sendValue: "NL", documentValue: "Nederlands" },
  certificateType: { sendValue: "EXPORT", documentValue: "Exportcertificaat" },
});

export function sqliteBenchStore(keep: boolean): BenchStore {
  const root = mkdtempSync(join(tmpdir(), "wia-bench-"));
  const dataDir = join(root, "data");
  const path = join(dataDir, "work-item-api.db");
  const open = () => {
    const db = new Database(path);
    db.pragma("busy_timeout = 10000");
    return db;
  };
  return {
    kind: "sqlite",
    databaseUrl: `sqlite:${path}`,
    description: `SQLite file ${path}`,
    dataDir,
    async countItems() {
      const db = open();
      try {
        return (db.prepare("SELECT COUNT(*) AS n FROM work_items").get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
    async preload(total, companyIds, perBatch, progress) {
      const db = open();
      // The preload is setup, not a measured write: it needs no fsync per transaction.
      db.pragma("synchronous = OFF");
      try {
        const insertBatch = db.prepare(
          "INSERT INTO work_batches (company_id, work_type, status, item_count, created_at, closed_at, completed_at) VALUES (?, 'AuthorityRvdm', 'Completed', ?, ?, ?, ?) RETURNING work_batch_id",
        );
        const insertItems = db.prepare(
          `WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < :count)
           INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, request, result,
             attempts, created_at, updated_at, completed_at)
           SELECT :company_id, :batch_id, 'AuthorityRvdm', 'Successful', 'HIST-' || :batch_id || '-' || n, 'DOC-' || n, :request,
             json_object('registrationNumber', 'RVDM-' || :batch_id || '-' || n, 'registeredAt', :at), 1, :at, :at, :at FROM seq`,
        );
        let stored = (db.prepare("SELECT COUNT(*) AS n FROM work_items").get() as { n: number }).n;
        const lastItemId = db.prepare(LAST_ITEM_ID);
        const chunk = db.transaction((batches: number) => {
          const before = (lastItemId.get() as { id: number }).id;
          for (let b = 0; b < batches && stored < total; b++) {
            const companyId = companyIds[b % companyIds.length]!;
            const count = Math.min(perBatch, total - stored);
            const at = new Date(Date.now() - 86_400_000).toISOString();
            const batch = insertBatch.get(companyId, count, at, at, at) as { work_batch_id: number };
            insertItems.run({ count, company_id: companyId, batch_id: batch.work_batch_id, request: PRELOAD_REQUEST, at });
            stored += count;
          }
          db.prepare(countSeededItems(before + 1, Number.MAX_SAFE_INTEGER)).run();
        });
        while (stored < total) {
          chunk(100);
          progress(stored);
        }
        db.pragma("wal_checkpoint(TRUNCATE)");
      } finally {
        db.close();
      }
    },
    async cleanup() {
      if (!keep) rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * Adds the items of ids `fromId`..`toId` that are not New to their companies' counts. The store
 * moves company_item_counts with each state change (src/store/core/transition.ts) and no trigger
 * does it for rows written past the store, so a seed that writes items in other states than New
 * runs this in the transaction of its insert. The same text on both stores.
 */
export function countSeededItems(fromId: number, toId: number): string {
  if (!Number.isSafeInteger(fromId) || !Number.isSafeInteger(toId)) throw new Error(`item ids must be integers, got ${fromId}..${toId}`);
  return `INSERT INTO company_item_counts (company_id, status, item_count)
    SELECT company_id, status, COUNT(*) FROM work_items WHERE work_item_id BETWEEN ${fromId} AND ${toId} AND status <> 'New' GROUP BY company_id, status
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = company_item_counts.item_count + excluded.item_count`;
}

/** The highest item id so far (0 with none): a seed counts the items after it. */
export const LAST_ITEM_ID = "SELECT COALESCE(MAX(work_item_id), 0) AS id FROM work_items";

/** Adds `options=-c search_path=<schema>` to a PostgreSQL URL. */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

export async function postgresBenchStore(baseUrl: string, keep: boolean, label = "bench"): Promise<BenchStore> {
  const schema = `${label}_${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`cannot reach PostgreSQL at ${new URL(baseUrl).host}: ${(error as Error).message}`);
  }
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const databaseUrl = withSearchPath(baseUrl, schema);
  const root = mkdtempSync(join(tmpdir(), "wia-bench-"));
  const query = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    kind: "postgres",
    databaseUrl,
    description: `PostgreSQL ${new URL(baseUrl).host}${new URL(baseUrl).pathname}, schema ${schema}`,
    dataDir: join(root, "data"),
    async countItems() {
      const rows = await query<{ n: string }>("SELECT COUNT(*) AS n FROM work_items");
      return Number(rows[0]!.n);
    },
    async preload(total, companyIds, perBatch, progress) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        // Setup, not a measured write: no need to wait for the WAL flush of each chunk.
        await client.query("SET synchronous_commit = off");
        let stored = Number((await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM work_items")).rows[0]!.n);
        while (stored < total) {
          await client.query("BEGIN");
          const before = Number((await client.query<{ id: string }>(LAST_ITEM_ID)).rows[0]!.id);
          for (let b = 0; b < 100 && stored < total; b++) {
            const companyId = companyIds[b % companyIds.length]!;
            const count = Math.min(perBatch, total - stored);
            // Timestamps come from now() and JSON from ::jsonb, which assign to timestamptz/text and jsonb/text columns alike.
            await client.query(
              `WITH batch AS (
                 INSERT INTO work_batches (company_id, work_type, status, item_count, created_at, closed_at, completed_at)
                 VALUES ($1, 'AuthorityRvdm', 'Completed', $2, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day')
                 RETURNING work_batch_id)
               INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, document_reference, request, result,
                 attempts, created_at, updated_at, completed_at)
               SELECT $1, batch.work_batch_id, 'AuthorityRvdm', 'Successful', 'HIST-' || batch.work_batch_id || '-' || n, 'DOC-' || n, $3::jsonb,
                 jsonb_build_object('registrationNumber', 'RVDM-' || batch.work_batch_id || '-' || n, 'registeredAt', now() - interval '1 day'),
                 1, now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
               FROM batch, generate_series(1, $2::int) AS n`,
              [companyId, count, PRELOAD_REQUEST],
            );
            stored += count;
          }
          await client.query(countSeededItems(before + 1, Number.MAX_SAFE_INTEGER));
          await client.query("COMMIT");
          progress(stored);
        }
        await client.query("ANALYZE work_items");
        await client.query("ANALYZE work_batches");
      } finally {
        await client.end();
      }
    },
    async cleanup() {
      rmSync(root, { recursive: true, force: true });
      if (keep) return;
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}
