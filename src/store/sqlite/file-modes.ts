/**
 * Who may read the embedded store (SPEC §24): the store, its WAL and shared-memory files, and its
 * backups hold every company's data and the encrypted webhook secrets, so only the service's user
 * reads them (0600), and a data folder the service makes is its alone (0700). SQLite gives the
 * WAL and shared-memory files the mode of the database file, so the file is made with it before
 * SQLite opens it; a store made by an earlier version is brought to it.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";

export const STORE_FILE_MODE = 0o600;
export const STORE_FOLDER_MODE = 0o700;

/** Makes the store's folder (0700) and file (0600) where they are missing, and narrows the files there are. */
export function prepareStoreFiles(path: string): void {
  // A folder that exists is left as it is: it may be shared (/tmp) or the operator's choice.
  mkdirSync(dirname(path), { recursive: true, mode: STORE_FOLDER_MODE });
  closeSync(openSync(path, "a", STORE_FILE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(file)) continue;
    try {
      chmodSync(file, STORE_FILE_MODE);
    } catch {
      // Not ours to change (a file another user made, read through its group): SQLite reports what matters.
    }
  }
}
