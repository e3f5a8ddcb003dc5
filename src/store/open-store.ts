/** Picks the backend named by DATABASE_URL. */
import type { StoreLocation } from "../config.ts";
import type { Store } from "./store.ts";
import { PostgresStore } from "./postgres/postgres-store.ts";
import { SqliteStore } from "./sqlite/sqlite-store.ts";

export async function openStore(location: StoreLocation): Promise<Store> {
  if (location.kind === "sqlite") return new SqliteStore(location.path);
  return PostgresStore.open(location.url, location.poolSize === undefined ? {} : { poolSize: location.poolSize });
}
