/**
 * The protocol the bot and the Authority speak, owned by neither side: the bot's adapters
 * (src/bot/) implement it and the simulator (src/authority-sim/) answers it.
 *
 * Two layers:
 * - the adapter interface, how the bot hands one work item to the Authority. An adapter
 *   answers `accepted` or `rejected` (a business decision, final) and throws for everything
 *   else; whether a thrown error is worth retrying is a property of the error.
 * - the wire protocol of the Authority's registration endpoint, what the `http` adapter sends
 *   and the simulator serves.
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

/** One way of reaching an Authority; a new work type's Authority means one new adapter in src/bot/. */
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
 * The registration endpoint: `POST {AUTHORITY_URL}/v1/registrations` with header
 * `Idempotency-Key` and a `RegistrationRequest` body → 201 (or 200 on a replay)
 * `RegistrationAccepted`, or 422 `RegistrationRejected`.
 */
export const REGISTRATIONS_PATH = "/v1/registrations";

/** Carries `AuthoritySubmission.idempotencyKey`; the same key always gets the first answer. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

export interface RegistrationRequest {
  workType: string;
  request: Record<string, unknown>;
}

export interface RegistrationAccepted {
  registrationNumber: string;
  /** ISO 8601. */
  registeredAt: string;
}

export interface RegistrationRejected {
  code: string;
  message: string;
  reasons: FieldReason[];
}
