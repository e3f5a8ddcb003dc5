/**
 * `db vacuum` on the embedded store (SPEC §22): every free page handed back to the file system.
 *
 * A store in incremental mode (every store made since this release) gives them back in chunks,
 * each a short write transaction, so it runs beside the service. A store made before is in
 * `none` mode, which only a whole VACUUM changes: it rewrites the file, holding the write lock
 * from start to end, so it runs only while no process has the store open (the same lock test as
 * a restore's), once; the store then stays in incremental mode, and so do its backups.
 */
import { existsSync } from "node:fs";
import Database from "better-sqlite3";
import { BackupError } from "./backup.ts";
import { applyConnectionPragmas } from "./pragmas.ts";
import { autoVacuumMode, returnFreePagesNow, sqliteStorageSize } from "./free-pages.ts";
import type { AutoVacuumMode, StorageSize } from "../storage.ts";

/** Pages one chunk hands back beside a running service: 4 MiB at 4 KiB pages. */
const PAGES_PER_CHUNK = 1024;

type FileSize = Extract<StorageSize, { kind: "sqlite" }>;

export interface VacuumResult {
  file: string;
  /** The mode before; `incremental` after, always. */
  autoVacuumBefore: AutoVacuumMode;
  /** A whole VACUUM ran, to switch the store to incremental mode. */
  rewritten: boolean;
  pagesReturned: number;
  before: FileSize;
  after: FileSize;
}

/** Why a vacuum was refused or failed, in one line for the operator. */
export class VacuumError extends BackupError {
  override name = "VacuumError";
}

const SQLITE_BUSY = /SQLITE_BUSY|database is locked/;

export function vacuumSqlite(path: string): VacuumResult {
  if (!existsSync(path)) throw new VacuumError(`there is no store at ${path} to vacuum`);
  const db = new Database(path, { fileMustExist: true });
  try {
    const before = sqliteStorageSize(db, path);
    const rewritten = before.autoVacuum !== "incremental";
    let pagesReturned: number;
    if (rewritten) {
      rewriteIncremental(db, path);
      pagesReturned = before.freePages;
    } else {
      applyConnectionPragmas(db);
      pagesReturned = 0;
      const chunk = { atLeast: 1, atMost: PAGES_PER_CHUNK };
      for (let returned = returnFreePagesNow(db, chunk); returned > 0; returned = returnFreePagesNow(db, chunk)) pagesReturned += returned;
    }
    // The vacuum's pages are in the WAL until a checkpoint writes them back and the file shrinks.
    db.pragma("wal_checkpoint(TRUNCATE)");
    return { file: path, autoVacuumBefore: before.autoVacuum, rewritten, pagesReturned, before, after: sqliteStorageSize(db, path) };
  } catch (error) {
    if (error instanceof VacuumError) throw error;
    throw new VacuumError(`the store at ${path} could not be vacuumed: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/**
 * The one-time switch: with the store held alone (EXCLUSIVE locking mode, granted only while no
 * other connection has it open), incremental mode is asked for and VACUUM rewrites the file in it.
 */
function rewriteIncremental(db: Database.Database, path: string): void {
  try {
    db.pragma("busy_timeout = 0");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
  } catch (error) {
    if (SQLITE_BUSY.test((error as Error).message) || /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code))) {
      throw new VacuumError(
        `the store at ${path} is in auto_vacuum mode ${autoVacuumMode(db)}, and switching it to incremental rewrites the whole file, which needs it alone; ` +
          `it is in use by a running process (a service, a worker or a CLI command): stop it, then run db vacuum again. Nothing was changed.`,
      );
    }
    throw error;
  }
  db.pragma("auto_vacuum = INCREMENTAL");
  db.exec("VACUUM");
  db.pragma("locking_mode = NORMAL");
}
