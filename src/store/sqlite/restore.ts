/**
 * Puts a backup of the embedded store in place (SPEC §18), or refuses and changes nothing:
 * - while any process has the store open: SQLite grants an exclusive lock on a WAL database only
 *   when no other connection holds it, even an idle one;
 * - when the copy fails the backup's own check.
 *
 * - for a copy of another deployment (SPEC §24), unless `fromAnotherDeployment` says it is meant.
 *
 * The copy is staged beside the store first: brought to this version's schema, and given a new
 * generation (store-generation.ts), so an item added after the restore with the id of one lost
 * with it is filed as itself, however often the same copy is restored. Then the store is locked,
 * and the staged copy replaces it in one rename; the old store stays beside it, named
 * `.replaced-<time>`.
 */
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { BackupError, checkCopy, countWorkItems } from "./backup.ts";
import { migrate } from "./sqlite-store.ts";
import { STORE_FILE_MODE, STORE_FOLDER_MODE } from "./file-modes.ts";
import { deploymentOf, newDeploymentId, raiseStoreGeneration, rekeyUnfiledItems, type StoreGeneration } from "./store-generation.ts";

export interface RestoreResult {
  file: string;
  restoredFrom: string;
  /** Where the store that was replaced is kept; null when there was none. */
  replaced: string | null;
  workItems: number;
  /** The restored store's generation: a number, and an id no generation had before; new items' idempotency keys carry the id. */
  generation: number;
  generationId: string;
  /** The deployment the restored store belongs to: a new one when the copy was of another deployment. */
  deploymentId: string;
  /** The other deployment the copy came from (`fromAnotherDeployment`); null when it was this one's. */
  copiedFromDeployment: string | null;
}

export interface RestoreOptions {
  now?: Date;
  /** Restore a copy of another deployment: meant, not a mistake. The restored store takes a new deployment id. */
  fromAnotherDeployment?: boolean;
}

/** Why a restore was refused, in one line for the operator; the store is as it was. */
export class RestoreError extends BackupError {
  override name = "RestoreError";
}

const SQLITE_BUSY = /SQLITE_BUSY|database is locked/;

export function restoreSqlite(store: string, copy: string, { now = new Date(), fromAnotherDeployment = false }: RestoreOptions = {}): RestoreResult {
  if (!existsSync(copy)) throw new RestoreError(`there is no file at ${copy} to restore from`);
  if (resolve(copy) === resolve(store)) throw new RestoreError(`${copy} is the store itself; name a backup`);
  const problem = checkCopy(copy);
  if (problem) throw new RestoreError(`the copy failed its check: ${problem}`);
  const deployment = deploymentToKeep(store, copy, fromAnotherDeployment);

  mkdirSync(dirname(store), { recursive: true, mode: STORE_FOLDER_MODE });
  const staged = `${store}.restoring`;
  let lock: Database.Database | undefined;
  try {
    rmSync(staged, { force: true });
    copyFileSync(copy, staged);
    chmodSync(staged, STORE_FILE_MODE);
    const generation = prepareStaged(staged, now, deployment);
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
    return {
      file: store,
      restoredFrom: copy,
      replaced,
      workItems: countWorkItems(store),
      generation: generation.generation,
      generationId: generation.generationId,
      deploymentId: generation.deploymentId,
      copiedFromDeployment: deployment.copiedFrom,
    };
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

/**
 * Whose copy it is (SPEC §24): a copy of another deployment is refused unless it is meant, and then
 * the restored store takes a new deployment id (`newId`), so its later copies are told apart from
 * both, and the copy's unfiled items are keyed by the new generation (store-generation.ts). A copy taken before deployments had ids (migration 0020) cannot tell, and is taken as this
 * deployment's. Nothing to compare with when there is no store yet (a new machine).
 */
interface DeploymentToKeep {
  /** The deployment id the restored store takes; unchanged when none. */
  newId?: string;
  /** The other deployment the copy is of, restored on purpose; null when it is this one's. */
  copiedFrom: string | null;
}

function deploymentToKeep(store: string, copy: string, fromAnotherDeployment: boolean): DeploymentToKeep {
  const ofCopy = deploymentOf(copy);
  const ofStore = existsSync(store) ? deploymentOf(store) : null;
  if (ofCopy === null || ofStore === null) return ofStore === null ? { copiedFrom: null } : { newId: ofStore, copiedFrom: null };
  if (ofCopy === ofStore) return { copiedFrom: null };
  if (!fromAnotherDeployment) {
    throw new RestoreError(
      `${copy} is a copy of deployment ${ofCopy}, and this store belongs to deployment ${ofStore}: restoring it would take another deployment's items for this one's. ` +
        `If that is meant, restore with --from-another-deployment (the store then takes a new deployment id). Nothing was changed.`,
    );
  }
  return { newId: newDeploymentId(), copiedFrom: ofCopy };
}

/**
 * The staged copy at this version's schema, with a new generation (and deployment, when given);
 * a copy of another deployment has its unfiled items keyed by the new generation. Returns it.
 */
function prepareStaged(staged: string, now: Date, deployment: DeploymentToKeep): StoreGeneration {
  const db = new Database(staged, { fileMustExist: true });
  try {
    migrate(db);
    return db.transaction(() => {
      const generation = raiseStoreGeneration(db, now.toISOString(), deployment.newId);
      if (deployment.copiedFrom !== null) rekeyUnfiledItems(db, generation.generationId);
      return generation;
    })();
  } finally {
    db.close();
  }
}
