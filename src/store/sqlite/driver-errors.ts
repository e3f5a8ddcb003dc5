/**
 * SQLite errors that mean "the database cannot serve this now" (busy or locked past the busy
 * timeout, an I/O error, a full disk, a read-only or vanished file, a closed handle) become
 * `StoreUnavailableError`, which the API answers with 503 and Retry-After. The mapping sits on
 * the connection itself, so no statement or transaction added later can forget it.
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
const TRANSACTION_VARIANTS = ["deferred", "immediate", "exclusive"] as const;

/**
 * Maps the driver errors of everything done through this connection: every statement it
 * prepares (now or later, in any module) and every transaction it runs, commit included.
 */
export function guardConnection(db: Database.Database): Database.Database {
  const prepare = db.prepare.bind(db);
  const transaction = db.transaction.bind(db);
  const exec = db.exec.bind(db);
  db.prepare = ((source: string) => guardStatement(guarded(() => prepare(source)))) as typeof db.prepare;
  db.exec = ((source: string) => guarded(() => exec(source))) as typeof db.exec;
  db.transaction = ((fn: (...args: unknown[]) => unknown) => {
    const tx = transaction(fn);
    const wrap = (run: (...args: unknown[]) => unknown) => (...args: unknown[]) => guarded(() => run(...args));
    const wrapped = Object.assign(wrap(tx), { database: db }) as unknown as Record<string, unknown>;
    for (const variant of TRANSACTION_VARIANTS) wrapped[variant] = wrap(tx[variant]);
    wrapped.default = wrapped;
    return wrapped;
  }) as unknown as typeof db.transaction;
  return db;
}

function guarded<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw toStoreError(error);
  }
}

function guardStatement(statement: Database.Statement): Database.Statement {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (!EXECUTING_METHODS.has(property) || typeof value !== "function") return value;
      let method = wrapped.get(property);
      if (!method) {
        method = (...args: unknown[]) => guarded(() => (value as (...a: unknown[]) => unknown).apply(target, args));
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
