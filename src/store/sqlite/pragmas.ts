/** Settings every connection to the embedded database uses (they are per connection in SQLite). */
import type Database from "better-sqlite3";

export function applyConnectionPragmas(db: Database.Database): void {
  // First: a connection that turns a new file to WAL, or finds another connection recovering it,
  // needs a lock the other may hold. Without a timeout set yet it fails at once with SQLITE_BUSY,
  // which the intake writer thread, opening beside the main connection at start-up, can meet.
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  // FULL: a commit returns only after the WAL is fsync'd, so an acknowledged item survives a crash,
  // the operating system's included.
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
}
