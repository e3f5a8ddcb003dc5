/**
 * Which driver errors mean "the database is unreachable or busy; retry shortly". Those become
 * `StoreUnavailableError` (503 with Retry-After); the message never carries SQL or the
 * connection string, only the cause does (for the log).
 */
import { StoreUnavailableError } from "../errors.ts";

/** Socket-level failures reported by Node. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * SQLSTATEs worth a retry: class 08 (connection exception) is matched by prefix; 57P01–57P03
 * (admin or crash shutdown, cannot connect now), 53300 (too many connections), and the
 * concurrency outcomes 40001 (serialization), 40P01 (deadlock) and 55P03 (lock not available).
 */
const RETRYABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "40001", "40P01", "55P03"]);

/** Messages of pg and pg-pool errors that carry no code. */
const CONNECTION_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|connection error|not queryable|Cannot use a pool after calling end|Client was closed/i;

export function isRetryableSqlState(code: string | undefined | null): boolean {
  return typeof code === "string" && (code.startsWith("08") || RETRYABLE_SQLSTATES.has(code));
}

export function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (NETWORK_CODES.has(code) || isRetryableSqlState(code))) return true;
  return typeof message === "string" && CONNECTION_MESSAGES.test(message);
}

/** The error to throw for a failed statement: StoreUnavailableError when retryable, else as is. */
export function storeError(error: unknown, what = "PostgreSQL does not answer"): unknown {
  if (error instanceof StoreUnavailableError) return error;
  return isUnavailable(error) ? new StoreUnavailableError(what, { cause: error }) : error;
}
