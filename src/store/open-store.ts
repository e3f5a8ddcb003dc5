/**
 * Picks the backend named by DATABASE_URL. Each backend is imported only when named, so a
 * process on SQLite never loads the PostgreSQL driver, nor one on PostgreSQL the SQLite one
 * (it matters most to the CLI, whose every call starts a process).
 */
import type { StoreLocation } from "../config.ts";
import type { Store } from "./store.ts";

export async function openStore(location: StoreLocation): Promise<Store> {
  if (location.kind === "sqlite") {
    const { openSqliteStore } = await import("./sqlite/sqlite-store.ts");
    return openSqliteStore(location.path);
  }
  const { openPostgresStore } = await import("./postgres/postgres-store.ts");
  return openPostgresStore(location.url, location.poolSize === undefined ? {} : { poolSize: location.poolSize });
}
