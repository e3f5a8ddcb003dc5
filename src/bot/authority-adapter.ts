/**
 * The authority adapter: how the bot hands one work item to the Authority. One interface, one
 * implementation per way of reaching an authority (today: `http`, which also talks to the
 * built-in simulator). A new work type's authority means one new adapter here.
 *
 * An adapter answers `accepted` or `rejected` (a business decision, final) and throws for
 * everything else; whether a thrown error is worth retrying is a property of the error.
 */
import type { RetryableError } from "../lib/backoff.ts";

export interface AuthoritySubmission {
  /** The work item's id: the Authority deduplicates on it, so a resubmission registers nothing new. */
  idempotencyKey: string;
  workType: string;
  /** The normalised request body the integrator submitted. */
  request: Record<string, unknown>;
}

export interface FieldReason {
  field: string;
  message: string;
}

export type AuthorityDecision =
  | { kind: "accepted"; registrationNumber: string; registeredAt: string }
  | { kind: "rejected"; message: string; reasons: FieldReason[] };

export interface AuthorityAdapter {
  readonly name: string;
  /** Files one item. Throws `AuthorityUnavailableError` (retryable) or `AuthorityProtocolError` (not). */
  submit(submission: AuthoritySubmission): Promise<AuthorityDecision>;
  close(): Promise<void>;
}

/** Timeout, connection refused, 5xx, 429: the same call may well succeed later. */
export class AuthorityUnavailableError extends Error implements RetryableError {
  override name = "AuthorityUnavailableError";
  readonly retryable = true;
}

/** The Authority answered something we cannot use (an unexpected 4xx, a malformed body). */
export class AuthorityProtocolError extends Error implements RetryableError {
  override name = "AuthorityProtocolError";
  readonly retryable = false;
}

/**
 * The wire protocol of the Authority's registration endpoint, as the simulator implements it:
 * `POST {AUTHORITY_URL}/v1/registrations` with header `Idempotency-Key` and body
 * `{workType, request}` → 201 (or 200 on a replay) `{registrationNumber, registeredAt}`, or
 * 422 `{code, message, reasons: [{field, message}]}`.
 */
export const REGISTRATIONS_PATH = "/v1/registrations";
