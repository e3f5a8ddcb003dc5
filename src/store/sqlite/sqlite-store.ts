/**
 * The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a resolved write
 * is on disk. The methods are the core's (../core/), over SqlitePort. What is SQLite's own:
 * adds are group-committed on a writer thread (intake-writer.ts), so one fsync serves many
 * requests and the event loop keeps serving while it happens; each generated server key
 * (the token signing key, the data encryption key) is a file beside the database; and a new
 * store is made in incremental auto-vacuum mode, so erased rows' pages go back to the file
 * system in small chunks (free-pages.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { createSqlStore } from "../core/create-store.ts";
import { KIND_COLUMNS, missingKinds, type KindLists } from "../kinds.ts";
import { readMigrations, SchemaBehindError, schemaStatus, type AppliedMigration, type MigrationMode, type SchemaStatus } from "../migrations.ts";
import type { ServerKeyName, Store } from "../store.ts";
import { toStoreError } from "./driver-errors.ts";
import { prepareStoreFiles } from "./file-modes.ts";
import { chooseIncrementalVacuum, sqliteStorage } from "./free-pages.ts";
import { IntakeWriter } from "./intake-writer.ts";
import { addMissingKinds, takenKinds } from "./kind-tables.ts";
import { applyConnectionPragmas } from "./pragmas.ts";
import { SQLITE_FLAGS, SqlitePort } from "./sqlite-port.ts";

export interface SqliteStore extends Store {
  readonly path: string;
  /** Group commit of adds on the writer thread; `intake.stats` holds the group sizes. */
  readonly intake: IntakeWriter;
}

const MIGRATIONS = new URL("./migrations/", import.meta.url);

/** `migrations`: apply the pending ones (default), refuse to open while any is pending, or neither (SPEC §18). */
export function openSqliteStore(path: string, options: { migrations?: MigrationMode } = {}): SqliteStore {
  const mode = options.migrations ?? "apply";
  let db: Database.Database;
  try {
    prepareStoreFiles(path);
    db = new Database(path);
    chooseIncrementalVacuum(db);
    applyConnectionPragmas(db);
    if (mode === "apply") migrate(db);
  } catch (error) {
    throw toStoreError(error);
  }
  const { pending, missingKinds: missing = [] } = mode === "require" ? statusOf(db) : { pending: [] };
  if (pending.length > 0 || missing.length > 0) {
    db.close();
    throw new SchemaBehindError(pending, [], missing);
  }
  const port = new SqlitePort(db);
  const intake = new IntakeWriter(path);
  const store = createSqlStore({
    kind: "sqlite",
    flags: SQLITE_FLAGS,
    db: port,
    addWorkItem: (input) => intake.add(input),
    addWorkItems: (input) => intake.addMany(input),
    getOrCreateServerKey: async (name, candidate) => serverKeyFile(join(dirname(path), SERVER_KEY_FILES[name]), candidate),
    schemaStatus: async () => statusOf(db),
    storage: sqliteStorage(port, path),
    // For `db migrate`, which runs alone: each migration is its own IMMEDIATE transaction on this connection.
    migrate: async () => {
      migrate(db);
      return statusOf(db);
    },
    async close() {
      await intake.close();
      await port.close();
    },
  });
  return Object.assign(store, { path, intake });
}

const SERVER_KEY_FILES: Record<ServerKeyName, string> = { jwt: "jwt-secret", "data-encryption": "data-encryption-key" };

/**
 * Kept as a file beside the database (mode 0600), so tokens and encrypted data survive a
 * restart; `wx` makes the first of several processes starting at once the one that decides.
 */
function serverKeyFile(file: string, candidate: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    try {
      writeFileSync(file, `${candidate}\n`, { mode: 0o600, flag: "wx" });
      return candidate;
    } catch {
      return readFileSync(file, "utf8").trim();
    }
  }
}

function statusOf(db: Database.Database): SchemaStatus {
  const recorded = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  const applied = recorded
    ? (db.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all() as Array<{ version: number; name: string; applied_at: string }>).map(
        (row): AppliedMigration => ({ version: row.version, name: row.name, appliedAt: row.applied_at }),
      )
    : [];
  return { ...schemaStatus(readMigrations(MIGRATIONS), applied), missingKinds: missingKinds(takenKinds(db)) };
}

/**
 * Brings the schema of an open SQLite store up to this version's: the pending migrations, one
 * IMMEDIATE transaction each, then the kinds it lacks (`kinds`: tests give longer lists).
 */
export function migrate(db: Database.Database, kinds: KindLists = KIND_COLUMNS): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  // A migration may rebuild a table other tables refer to, which SQLite allows only with foreign
  // keys off (the switch is a no-op inside a transaction); each checks them before it commits.
  db.pragma("foreign_keys = OFF");
  try {
    for (const migration of readMigrations(MIGRATIONS)) {
      // IMMEDIATE takes the write lock first, so two processes starting at once apply it once.
      const apply = db.transaction(() => {
        if (db.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(migration.version)) return;
        db.exec(migration.sql);
        const broken = db.pragma("foreign_key_check") as unknown[];
        if (broken.length > 0) throw new Error(`migration ${migration.version} leaves ${broken.length} rows without their parent`);
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(migration.version, migration.name, new Date().toISOString());
      });
      apply.immediate();
    }
  } finally {
    db.pragma("foreign_keys = ON");
  }
  addMissingKinds(db, kinds);
}
