/** Picks the backend named by DATABASE_URL. */
import type { StoreLocation } from "../config.ts";
import type { Store } from "./store.ts";
import { openPostgresStore } from "./postgres/postgres-store.ts";
import { openSqliteStore } from "./sqlite/sqlite-store.ts";

export async function openStore(location: StoreLocation): Promise<Store> {
  if (location.kind === "sqlite") return openSqliteStore(location.path);
  return openPostgresStore(location.url, location.poolSize === undefined ? {} : { poolSize: location.poolSize });
}
