/**
 * Puts a backup of the embedded store in place (SPEC §18), or refuses and changes nothing:
 * - while any process has the store open: SQLite grants an exclusive lock on a WAL database only
 *   when no other connection holds it, even an idle one;
 * - when the copy fails the backup's own check.
 *
 * The copy is staged beside the store first: brought to this version's schema, and its generation
 * raised (store-generation.ts), so an item added after the restore with the id of one lost with
 * it is filed as itself. Then the store is locked, and the staged copy replaces it in one rename;
 * the old store stays beside it, named `.replaced-<time>`.
 */
import { copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { BackupError, checkCopy, countWorkItems } from "./backup.ts";
import { migrate } from "./sqlite-store.ts";
import { raiseStoreGeneration } from "./store-generation.ts";

export interface RestoreResult {
  file: string;
  restoredFrom: string;
  /** Where the store that was replaced is kept; null when there was none. */
  replaced: string | null;
  workItems: number;
  /** The restored store's generation: new items' idempotency keys carry it. */
  generation: number;
}

/** Why a restore was refused, in one line for the operator; the store is as it was. */
export class RestoreError extends BackupError {
  override name = "RestoreError";
}

const SQLITE_BUSY = /SQLITE_BUSY|database is locked/;

export function restoreSqlite(store: string, copy: string, now = new Date()): RestoreResult {
  if (!existsSync(copy)) throw new RestoreError(`there is no file at ${copy} to restore from`);
  if (resolve(copy) === resolve(store)) throw new RestoreError(`${copy} is the store itself; name a backup`);
  const problem = checkCopy(copy);
  if (problem) throw new RestoreError(`the copy failed its check: ${problem}`);

  mkdirSync(dirname(store), { recursive: true });
  const staged = `${store}.restoring`;
  let lock: Database.Database | undefined;
  try {
    rmSync(staged, { force: true });
    copyFileSync(copy, staged);
    const generation = prepareStaged(staged, now);
    if (existsSync(store)) lock = lockStore(store);
    let replaced: string | null = null;
    if (lock) {
      replaced = `${store}.replaced-${now.toISOString().replace(/[:.]/g, "-")}`;
      // The old store keeps its content under a second name; the rename then swaps the store's name
      // over to the copy at once, so no process ever finds the store missing.
      linkSync(store, replaced);
    }
    for (const leftover of [`${store}-wal`, `${store}-shm`]) rmSync(leftover, { force: true });
    renameSync(staged, store);
    return { file: store, restoredFrom: copy, replaced, workItems: countWorkItems(store), generation };
  } catch (error) {
    rmSync(staged, { force: true });
    if (error instanceof RestoreError) throw error;
    throw new RestoreError(`the copy could not be put in place: ${(error as Error).message}`);
  } finally {
    lock?.close();
  }
}

/**
 * Holds the store so that no process can open it until the restore is done. The lock is kept after
 * its transaction (EXCLUSIVE locking mode); leaving WAL mode writes what the WAL holds into the file
 * that is kept, so no WAL of the old store is left for the copy to pick up.
 */
function lockStore(store: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(store, { fileMustExist: true, timeout: 0 });
  } catch (error) {
    throw new RestoreError(`the store at ${store} cannot be opened: ${(error as Error).message}. Nothing was changed.`);
  }
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    db.pragma("journal_mode = DELETE");
    return db;
  } catch (error) {
    db.close();
    const message = (error as Error).message;
    if (SQLITE_BUSY.test(message) || /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code))) {
      throw new RestoreError(`the store at ${store} is in use by a running process (a service, a worker or a CLI command): stop it, then restore. Nothing was changed.`);
    }
    throw new RestoreError(`the store at ${store} cannot be locked: ${message}. Nothing was changed.`);
  }
}

/** The staged copy at this version's schema, with its generation raised; returns that generation. */
function prepareStaged(staged: string, now: Date): number {
  const db = new Database(staged, { fileMustExist: true });
  try {
    migrate(db);
    return raiseStoreGeneration(db, now.toISOString());
  } finally {
    db.close();
  }
}
