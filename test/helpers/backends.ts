/**
 * The stores every store and route test runs against. SQLite always, in a temp file;
 * PostgreSQL when it answers at 127.0.0.1:5432 (or TEST_DATABASE_URL), in a fresh schema per
 * `create()` call, selected through the connection string's search_path and dropped in cleanup.
 * When TEST_DATABASE_URL names a Citus coordinator, each fresh schema is migrated and
 * distributed (`db distribute`) before the test sees it.
 *
 * Without PostgreSQL the tests fail when CI=true (the PostgreSQL run is mandatory there) and
 * otherwise say loudly on stderr that the PostgreSQL half was skipped.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { StoreLocation } from "../../src/config.ts";
import { openStore } from "../../src/store/open-store.ts";
import { distributeSchema } from "../../src/store/postgres/distribution.ts";
import type { Store } from "../../src/store/store.ts";

export interface Backend {
  name: "sqlite" | "postgres";
  /** A fresh, empty location of this backend (migrated when a store first opens it). */
  create(): Promise<{ location: StoreLocation; databaseUrl: string; cleanup(): Promise<void> }>;
}

export const sqliteBackend: Backend = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "wia-test-"));
    const path = join(dir, "data", "work-item-api.db");
    return { location: { kind: "sqlite", path }, databaseUrl: `sqlite:${path}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

/** The database the test schemas are made in; trust auth on the test machines. */
export const POSTGRES_TEST_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SCHEMA_PREFIX = "wia_test_";
/** Schemas of runs that were killed before their cleanup are dropped once this old. */
const STALE_SCHEMA_SECONDS = 6 * 3600;

/** Runs `work` on a short-lived connection to the test database (outside any test schema). */
export async function withPostgresAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The connection string that puts every session of a process into `schema`. Its commits do not
 * wait for the WAL's flush to disk (synchronous_commit=off): they are as visible and as final to
 * every other session and to a killed client, and only a crash of the shared server itself, which
 * no test causes, could lose them. Waiting for the flush made the flush the pace of the suite.
 */
export const postgresUrlForSchema = (schema: string) =>
  `${POSTGRES_TEST_URL}${POSTGRES_TEST_URL.includes("?") ? "&" : "?"}options=-c%20search_path%3D${schema}%20-c%20synchronous_commit%3Doff`;

export const postgresBackend: Backend = {
  name: "postgres",
  async create() {
    // The creation time is part of the name, so a later run can sweep up what a killed one left.
    const schema = `${SCHEMA_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(5).toString("hex")}`;
    await withPostgresAdmin((client) => client.query(`CREATE SCHEMA ${schema}`));
    const url = postgresUrlForSchema(schema);
    if (await testDatabaseHasCitus()) {
      // On a Citus coordinator every suite runs on a distributed schema, as production would.
      const store = await openStore({ kind: "postgres", url });
      await store.close();
      await distributeSchema(url);
    }
    return {
      location: { kind: "postgres", url },
      databaseUrl: url,
      cleanup: async () => {
        await closeSidePool(url);
        await withPostgresAdmin(async (client) => void (await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)));
      },
    };
  },
};

let citus: Promise<boolean> | undefined;
const testDatabaseHasCitus = () =>
  (citus ??= withPostgresAdmin(async (client) => (await client.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'")).rows.length > 0));

async function postgresAnswers(): Promise<boolean> {
  try {
    await withPostgresAdmin(async (client) => {
      const { rows } = await client.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE $1", [`${SCHEMA_PREFIX}%`]);
      const now = Date.now() / 1000;
      for (const { nspname } of rows) {
        const created = Number(/^wia_test_(\d+)_/.exec(nspname)?.[1]);
        if (created > 0 && now - created > STALE_SCHEMA_SECONDS) await client.query(`DROP SCHEMA IF EXISTS ${nspname} CASCADE`);
      }
    });
    return true;
  } catch {
    return false;
  }
}

let available: Promise<Backend[]> | undefined;

/** Every backend available here; throws under CI=true when PostgreSQL does not answer. */
export function availableBackends(): Promise<Backend[]> {
  available ??= (async () => {
    if (await postgresAnswers()) return [sqliteBackend, postgresBackend];
    const where = POSTGRES_TEST_URL.replace(/\/\/[^@]*@/, "//");
    if (process.env.CI === "true") {
      throw new Error(`PostgreSQL does not answer at ${where}; with CI=true the PostgreSQL tests are mandatory (.ci/run starts it)`);
    }
    process.stderr.write(`\n!!!!! PostgreSQL does not answer at ${where}: the PostgreSQL tests are SKIPPED, only SQLite ran. Start PostgreSQL to run them. !!!!!\n\n`);
    return [sqliteBackend];
  })();
  return available;
}

export async function openFreshStore(backend: Backend): Promise<{ store: Store; location: StoreLocation; databaseUrl: string; cleanup(): Promise<void> }> {
  const created = await backend.create();
  const store = await openStore(created.location);
  return {
    store,
    location: created.location,
    databaseUrl: created.databaseUrl,
    cleanup: async () => {
      await store.close();
      await created.cleanup();
    },
  };
}

/** Row totals across all companies, read past the store: tests prove a refused request stored nothing. */
export interface RowCounts {
  companies: number;
  apiKeys: number;
  workBatches: number;
  workItems: number;
  idempotencyKeys: number;
}

const COUNT_ROWS = `SELECT (SELECT COUNT(*) FROM companies) AS companies, (SELECT COUNT(*) FROM api_keys) AS api_keys,
  (SELECT COUNT(*) FROM work_batches) AS work_batches, (SELECT COUNT(*) FROM work_items) AS work_items,
  (SELECT COUNT(*) FROM idempotency_keys) AS idempotency_keys`;

/** Rows of a query run past the store, on its own connection (tests look at what was stored). */
export async function queryRows<R extends Record<string, unknown>>(location: StoreLocation, sql: string, params: unknown[] = []): Promise<R[]> {
  if (location.kind === "sqlite") {
    const db = new Database(location.path, { readonly: true });
    try {
      return db.prepare(sql.replace(/\$\d+/g, "?")).all(...params) as R[];
    } finally {
      db.close();
    }
  }
  return (await sidePool(location.url).query<R>(sql, params)).rows;
}

const sidePools = new Map<string, pg.Pool>();
/**
 * One small pool per database URL for the tests' own reads and writes past the store. A new
 * connection per check cost PostgreSQL a backend's start each time (about 20–50 ms), which set
 * the pace of tests that check after every request. Idle connections close after a second and
 * never keep a test process alive; one a test's fault injection kills is dropped, not thrown.
 */
function sidePool(url: string): pg.Pool {
  let pool = sidePools.get(url);
  if (!pool) {
    pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 1000, allowExitOnIdle: true });
    pool.on("error", () => {});
    sidePools.set(url, pool);
  }
  return pool;
}

async function closeSidePool(url: string): Promise<void> {
  const pool = sidePools.get(url);
  sidePools.delete(url);
  await pool?.end();
}

/** Runs a write past the store ($1… parameters on both backends): data as an older build left it. */
export async function writePastStore(location: StoreLocation, sql: string, params: unknown[] = []): Promise<number> {
  if (location.kind === "sqlite") {
    const db = new Database(location.path);
    try {
      return db.prepare(sql.replace(/\$\d+/g, "?")).run(...params).changes;
    } finally {
      db.close();
    }
  }
  return (await sidePool(location.url).query(sql, params)).rowCount ?? 0;
}

export async function countRows(location: StoreLocation): Promise<RowCounts> {
  const row = (await queryRows<Record<string, number | string>>(location, COUNT_ROWS))[0]!;
  return {
    companies: Number(row.companies),
    apiKeys: Number(row.api_keys),
    workBatches: Number(row.work_batches),
    workItems: Number(row.work_items),
    idempotencyKeys: Number(row.idempotency_keys),
  };
}
