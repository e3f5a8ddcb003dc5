/**
 * A consistent copy of the embedded store while the service runs and takes adds (SPEC §18):
 * `VACUUM INTO` on a connection of its own. It reads the database in one read transaction, so the
 * copy holds exactly what was committed when it began (every add answered before), and in WAL
 * mode it holds back no writer. SQLite's page-by-page backup API would start over at every write
 * of another connection, and intake writes all the time. The copy is then checked
 * (`PRAGMA integrity_check`) before it is reported.
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

export interface BackupResult {
  file: string;
  bytes: number;
  workItems: number;
  /** When the copy's read began: it holds everything committed before. */
  takenAt: string;
}

/** Why a backup or its check failed, in one line for the operator; nothing was left behind. */
export class BackupError extends Error {
  override name = "BackupError";
}

export function backupSqlite(source: string, file: string): BackupResult {
  if (!existsSync(source)) throw new BackupError(`there is no store at ${source} to back up`);
  if (existsSync(file)) throw new BackupError(`${file} exists already; name a new file (the backup never overwrites one)`);
  if (!existsSync(dirname(file))) throw new BackupError(`the folder ${dirname(file)} does not exist`);
  const db = new Database(source, { readonly: true, fileMustExist: true });
  const takenAt = new Date().toISOString();
  try {
    db.prepare("VACUUM INTO ?").run(file);
  } catch (error) {
    // A full disk or a folder we may not write: leave no half-written copy behind.
    rmSync(file, { force: true });
    throw new BackupError(`the copy could not be written to ${file}: ${(error as Error).message}`);
  } finally {
    db.close();
  }
  const problem = checkCopy(file);
  if (problem) {
    rmSync(file, { force: true });
    throw new BackupError(`the copy failed its check and was removed: ${problem}`);
  }
  return { file, bytes: statSync(file).size, workItems: countWorkItems(file), takenAt };
}

/** What is wrong with a copy of the store, if anything: not SQLite, not ours, or not intact. */
export function checkCopy(file: string): string | undefined {
  let copy: Database.Database;
  try {
    copy = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    return `${file} cannot be opened as SQLite: ${(error as Error).message}`;
  }
  try {
    const integrity = copy.pragma("integrity_check", { simple: true });
    if (integrity !== "ok") return `integrity_check says ${String(integrity)}`;
    const ours = copy.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'work_items')").all();
    if (ours.length < 2) return `${file} is a SQLite database, but not a Work-Item API store`;
    return undefined;
  } catch (error) {
    return `${file} is not a readable SQLite database: ${(error as Error).message}`;
  } finally {
    copy.close();
  }
}

export function countWorkItems(file: string): number {
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Number((copy.prepare("SELECT count(*) AS n FROM work_items").get() as { n: number }).n);
  } finally {
    copy.close();
  }
}
