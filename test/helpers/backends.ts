/**
 * The stores every store and route test runs against. SQLite always, in a temp file;
 * PostgreSQL when reachable, in a fresh schema per test file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { StoreLocation } from "../../src/config.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/store.ts";

export interface Backend {
  name: "sqlite" | "postgres";
  /** A fresh, empty, migrated location of this backend. */
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

/** Every backend available here. */
export async function availableBackends(): Promise<Backend[]> {
  return [sqliteBackend];
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
