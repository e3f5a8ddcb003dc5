/**
 * A consistent copy of the embedded store while the service runs and takes adds (SPEC §18):
 * `VACUUM INTO` on a connection of its own. It reads the database in one read transaction, so the
 * copy holds exactly what was committed when it began (every add answered before), and in WAL
 * mode it holds back no writer. SQLite's page-by-page backup API would start over at every write
 * of another connection, and intake writes all the time. The copy is then checked
 * (`PRAGMA integrity_check`) before it is reported.
 *
 * A copy holds every company's data, so it is the service user's alone (0600, file-modes.ts). It
 * is written to a temporary file beside the target and linked to the target's name only once it
 * is whole and checked: no half-written copy ever carries the name, and the link, unlike a rename,
 * never replaces a file that appeared meanwhile. The target must not exist in any form: a symlink,
 * even a dangling one, is refused, not followed to wherever it points.
 */
import { closeSync, existsSync, linkSync, lstatSync, openSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { STORE_FILE_MODE } from "./file-modes.ts";

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
  const existing = entryAt(file);
  if (existing === "symlink") throw new BackupError(`${file} is a symbolic link; name a new file (the backup never follows a link)`);
  if (existing === "other") throw new BackupError(`${file} exists already; name a new file (the backup never overwrites one)`);
  if (!existsSync(dirname(file))) throw new BackupError(`the folder ${dirname(file)} does not exist (make it first, e.g. mkdir -m 700 -p ${dirname(file)})`);
  const partial = join(dirname(file), `.${basename(file)}.partial-${process.pid}`);
  try {
    const takenAt = writeCopy(source, partial);
    const problem = checkCopy(partial);
    if (problem) throw new BackupError(`the copy failed its check and was removed: ${problem}`);
    try {
      linkSync(partial, file);
    } catch (error) {
      throw new BackupError(`the copy could not be named ${file}: ${(error as Error).message}`);
    }
    return { file, bytes: statSync(file).size, workItems: countWorkItems(file), takenAt };
  } finally {
    // A full disk, a folder we may not write, a failed check: no half-written copy is left behind.
    rmSync(partial, { force: true });
  }
}

/** What is at `path` without following a link: nothing, a symbolic link, or something else. */
function entryAt(path: string): "none" | "symlink" | "other" {
  try {
    return lstatSync(path).isSymbolicLink() ? "symlink" : "other";
  } catch {
    return "none";
  }
}

/** `VACUUM INTO` an empty file made for it, so the copy has the store's mode; returns when its read began. */
function writeCopy(source: string, partial: string): string {
  try {
    closeSync(openSync(partial, "wx", STORE_FILE_MODE));
  } catch (error) {
    throw new BackupError(`the copy could not be written in ${dirname(partial)}: ${(error as Error).message}`);
  }
  const db = new Database(source, { readonly: true, fileMustExist: true });
  const takenAt = new Date().toISOString();
  try {
    db.prepare("VACUUM INTO ?").run(partial);
    return takenAt;
  } catch (error) {
    throw new BackupError(`the copy could not be written in ${dirname(partial)}: ${(error as Error).message}`);
  } finally {
    db.close();
  }
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
