/** When and how long the SDK waits before it repeats a request. */

/** Statuses that mean "try again later": rate limit, and a server or gateway that is not ready. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/** The 409 of an idempotent request whose first attempt is still being committed. */
export const IDEMPOTENCY_IN_FLIGHT_TYPE = "urn:work-item-api:problem:idempotency-in-flight";

/**
 * Capped exponential backoff with jitter: half the step is fixed, half random, so clients that
 * failed together do not come back together, and no wait is ever zero.
 */
export function backoffDelay(retry: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const step = Math.min(capMs, baseMs * 2 ** retry);
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * Retry-After in milliseconds: delta-seconds (`120`) or an HTTP date. Undefined when absent or
 * unreadable, so the caller falls back to its own backoff.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
