/**
 * Picks the backend named by DATABASE_URL. Each backend is imported only when named, so a
 * process on SQLite never loads the PostgreSQL driver, nor one on PostgreSQL the SQLite one
 * (it matters most to the CLI, whose every call starts a process).
 */
import type { StoreLocation } from "../config.ts";
import type { MigrationMode, Store } from "./store.ts";

/** `migrations`: apply the pending ones (the default), refuse to open while any is pending, or neither (SPEC §18). */
export async function openStore(location: StoreLocation, options: { migrations?: MigrationMode } = {}): Promise<Store> {
  const migrations = options.migrations ?? "apply";
  if (location.kind === "sqlite") {
    const { openSqliteStore } = await import("./sqlite/sqlite-store.ts");
    return openSqliteStore(location.path, { migrations });
  }
  const { openPostgresStore } = await import("./postgres/postgres-store.ts");
  return openPostgresStore(location.url, { migrations, ...(location.poolSize === undefined ? {} : { poolSize: location.poolSize }) });
}
