/** Settings every connection to the embedded database uses (they are per connection in SQLite). */
import type Database from "better-sqlite3";

export function applyConnectionPragmas(db: Database.Database): void {
  db.pragma("journal_mode = WAL");
  // FULL: a commit returns only after the WAL is fsync'd, so an acknowledged item survives a crash,
  // the operating system's included.
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
}
