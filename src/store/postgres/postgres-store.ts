/**
 * The shared store: PostgreSQL through a `pg` pool, for any number of `api` and `worker`
 * processes on one database. The methods are the core's (../core/), over PostgresPort;
 * correctness across processes comes from the database itself (row locks, SKIP LOCKED, the
 * partial unique index that keeps one Open batch per company and work type).
 *
 * What is PostgreSQL's own: appends use group commit (appends.ts), concurrent calls sharing one
 * transaction with a savepoint per item, a bulk add one transaction of its own; and the generated
 * server keys (token signing, data encryption) live in a table, so every process sharing the
 * database uses the same ones.
 */
import { createSqlStore } from "../core/create-store.ts";
import { StoreUnavailableError } from "../errors.ts";
import type { MigrationMode, ServerKeyName, Store } from "../store.ts";
import { createAppender } from "./appends.ts";
import { POSTGRES_FLAGS, PostgresPort } from "./postgres-port.ts";
import { POSTGRES_SQL } from "./statements.ts";

export interface PostgresStoreOptions {
  /** Connections this process may open (default 10). */
  poolSize?: number;
  /** Groups of appends in flight at once, each on its own connection (default 4). */
  addChannels?: number;
  /** Apply pending migrations (default), refuse to open while any is pending, or neither (SPEC §18). */
  migrations?: MigrationMode;
}

/** Row names in signing_secrets; "jwt-hs256" predates the data encryption key. */
const SERVER_KEY_ROWS: Record<ServerKeyName, string> = { jwt: "jwt-hs256", "data-encryption": "data-encryption-key" };

/** Connects, applies pending migrations (or as `options.migrations` says), and returns the store. */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const db = await PostgresPort.open(url, options.poolSize ?? 10, options.migrations);
  const adds = createAppender(db, options.addChannels ?? 4);
  let closing: Promise<void> | undefined;
  return createSqlStore({
    kind: "postgres",
    flags: POSTGRES_FLAGS,
    db,
    addWorkItem(input) {
      if (closing) return Promise.reject(new StoreUnavailableError("the store is closing"));
      return adds.add(input);
    },
    addWorkItems(input) {
      if (closing) return Promise.reject(new StoreUnavailableError("the store is closing"));
      return adds.addMany(input);
    },
    schemaStatus: () => db.schemaStatus(),
    migrate: () => db.migrate(),
    storage: {
      async storageSize() {
        const row = (await db.one<{ database_bytes: string; schema: string; schema_bytes: string }>(POSTGRES_SQL.storageSize))!;
        return { kind: "postgres", databaseBytes: Number(row.database_bytes), schema: row.schema, schemaBytes: Number(row.schema_bytes) };
      },
      // Autovacuum makes deleted rows' space reusable without a lock intake waits on; nothing to hand back by hand.
      returnFreePages: async () => 0,
    },
    async getOrCreateServerKey(name, candidate) {
      // Read first: the key is made once per deployment, and on Citus signing_secrets is a
      // reference table, whose every write needs every node (SPEC §23).
      const existing = await db.one<{ secret: string }>(POSTGRES_SQL.getSigningSecret, [SERVER_KEY_ROWS[name]]);
      if (existing) return existing.secret;
      await db.run(POSTGRES_SQL.insertSigningSecret, [SERVER_KEY_ROWS[name], candidate]);
      return (await db.one<{ secret: string }>(POSTGRES_SQL.getSigningSecret, [SERVER_KEY_ROWS[name]]))!.secret;
    },
    close() {
      closing ??= (async () => {
        await adds.drain();
        await db.close();
      })();
      return closing;
    },
  });
}
