/**
 * SQLite errors that mean "the database cannot serve this now" (busy or locked past the busy
 * timeout, an I/O error, a full disk, a read-only or vanished file, a closed handle) become
 * `StoreUnavailableError`, which the API answers with 503 and Retry-After.
 */
import { StoreUnavailableError } from "../errors.ts";

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|NOMEM|PROTOCOL|NOLFS)(_|$)/;

export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.test(code)) return true;
  // better-sqlite3 throws a TypeError when the handle was closed under a late request.
  return error instanceof TypeError && /database connection is not open/i.test(error.message);
}

export function toStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error;
  const code = (error as { code?: unknown }).code;
  return new StoreUnavailableError(`SQLite is unavailable (${typeof code === "string" ? code : "closed"})`, { cause: error });
}
