/** Picks the backend named by DATABASE_URL. */
import type { StoreLocation } from "../config.ts";
import type { Store } from "./store.ts";
import { SqliteStore } from "./sqlite/sqlite-store.ts";

export async function openStore(location: StoreLocation): Promise<Store> {
  if (location.kind === "sqlite") return new SqliteStore(location.path);
  throw new Error(`DATABASE_URL ${location.url.split("@").pop()}: the PostgreSQL store is not built yet`);
}
