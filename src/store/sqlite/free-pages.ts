/**
 * The embedded store's size, and its free pages given back (SPEC §22). A store is made in
 * `auto_vacuum = INCREMENTAL` mode, so the pages a sweep or an erase frees can be handed back to
 * the file system in small chunks, each a write transaction of a few milliseconds, instead of one
 * VACUUM that rewrites the whole file while intake waits. A store made before that is in `none`
 * mode until one VACUUM switches it (`db vacuum`, vacuum-store.ts); until then its free pages are
 * only reused by later writes.
 */
import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { AutoVacuumMode, StorageSize, StorageStore } from "../storage.ts";
import type { SqlitePort } from "./sqlite-port.ts";

const AUTO_VACUUM_MODES: readonly AutoVacuumMode[] = ["none", "full", "incremental"];

export function autoVacuumMode(db: Database.Database): AutoVacuumMode {
  return AUTO_VACUUM_MODES[Number(db.pragma("auto_vacuum", { simple: true }))] ?? "none";
}

/**
 * The mode a new store is made in. SQLite fixes it when the file's first page is written, which
 * switching to WAL already does, so this runs first on a connection to a file still empty.
 */
export function chooseIncrementalVacuum(db: Database.Database): void {
  if (Number(db.pragma("page_count", { simple: true })) === 0) db.pragma("auto_vacuum = INCREMENTAL");
}

export function sqliteStorageSize(db: Database.Database, path: string): Extract<StorageSize, { kind: "sqlite" }> {
  const pageSize = Number(db.pragma("page_size", { simple: true }));
  const pages = Number(db.pragma("page_count", { simple: true }));
  const freePages = Number(db.pragma("freelist_count", { simple: true }));
  return { kind: "sqlite", bytes: pages * pageSize, pageSize, pages, freePages, freeBytes: freePages * pageSize, fileBytes: statSync(path).size, autoVacuum: autoVacuumMode(db) };
}

/**
 * Gives up to `atMost` free pages back once `atLeast` are free; 0 unless the store is in
 * incremental mode. Reading the free list's length takes no lock; the vacuum is a write
 * transaction with its own commit, so it waits until there is a chunk worth one.
 */
export function returnFreePagesNow(db: Database.Database, { atLeast, atMost }: { atLeast: number; atMost: number }): number {
  if (!Number.isSafeInteger(atMost) || atMost <= 0) throw new RangeError(`atMost must be a positive integer, got ${atMost}`);
  // In another mode incremental_vacuum does nothing, but it would still take the write lock.
  if (autoVacuumMode(db) !== "incremental") return 0;
  const before = Number(db.pragma("freelist_count", { simple: true }));
  if (before === 0 || before < atLeast) return 0;
  db.pragma(`incremental_vacuum(${atMost})`);
  return before - Number(db.pragma("freelist_count", { simple: true }));
}

export function sqliteStorage(port: SqlitePort, path: string): StorageStore {
  return {
    storageSize: () => port.withConnection((db) => sqliteStorageSize(db, path)),
    returnFreePages: (bounds) => port.withConnection((db) => returnFreePagesNow(db, bounds)),
  };
}
