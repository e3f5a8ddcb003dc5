/**
 * The one retry policy of background work: the bot (authority calls) and the webhook sender
 * share it. Whether to retry at all is a property of the error (`retryable`); how long to wait
 * is this jittered exponential backoff.
 */

export interface BackoffPolicy {
  /** Delay before the first retry, in milliseconds. */
  baseMs: number;
  /** Longest delay, however many attempts failed. */
  maxMs: number;
}

/**
 * Delay before the next try after `failures` failed tries (1 = the first failure).
 * "Equal jitter": half of the exponential step is fixed and half random, so workers that
 * failed together spread out, yet no retry is ever immediate.
 */
export function backoffDelayMs(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 52);
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(step / 2 + random() * (step / 2));
}

/** When the next try is due, as an ISO timestamp. */
export const nextAttemptAt = (now: Date, failures: number, policy: BackoffPolicy, random?: () => number): string =>
  new Date(now.getTime() + backoffDelayMs(failures, policy, random)).toISOString();

/** An error that says whether trying the same thing again later may succeed. */
export interface RetryableError extends Error {
  readonly retryable: boolean;
}

/** True only for errors that declare themselves retryable; anything unknown is not. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof Error && (error as Partial<RetryableError>).retryable === true;
