/**
 * SQLite errors that mean "the database cannot serve this now" (busy or locked past the busy
 * timeout, an I/O error, a full disk, a read-only or vanished file, a closed handle) become
 * `StoreUnavailableError`, which the API answers with 503 and Retry-After. They are raised
 * where the driver is called, so no statement added later can forget it.
 */
import type Database from "better-sqlite3";
import { StoreUnavailableError } from "../../errors.ts";

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

const EXECUTING_METHODS = new Set<PropertyKey>(["run", "get", "all", "iterate"]);

/** Wraps each prepared statement so its driver errors are mapped as above. */
export function guardStatements<T extends Record<string, Database.Statement>>(statements: T): T {
  const guarded = {} as Record<string, Database.Statement>;
  for (const [name, statement] of Object.entries(statements)) guarded[name] = guardStatement(statement);
  return guarded as T;
}

function guardStatement(statement: Database.Statement): Database.Statement {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (!EXECUTING_METHODS.has(property) || typeof value !== "function") return value;
      let method = wrapped.get(property);
      if (!method) {
        method = (...args: unknown[]) => {
          try {
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (error) {
            throw toStoreError(error);
          }
        };
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
