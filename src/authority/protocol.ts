/**
 * The protocol the bot and the Authority speak, owned by neither side: the bot's adapters
 * (src/bot/) implement it and the simulator (src/authority-sim/) answers it.
 *
 * Filing has two stages, as at the real Authority (SPEC §10): `submit` passes a syntax check
 * only and answers at once with an application number; the decision (a registration number or
 * the reasons for a rejection) comes later, from `status`.
 *
 * Two layers:
 * - the adapter interface, how the bot hands one work item to the Authority and asks how it
 *   went. Answers are data; everything else is thrown, and whether a thrown error is worth
 *   retrying is a property of the error.
 * - the wire protocol, what the `http` adapter sends and the simulator serves.
 */
import type { Span } from "@opentelemetry/api";
import { FOLLOW_UP_KINDS, type FollowUpKind } from "../domain/work-item-kinds.ts";
import type { RetryableError } from "../lib/backoff.ts";

/**
 * The idempotency key of a work item's call (submit, change or withdrawal): the Authority
 * deduplicates on it, so a resubmission gets the first answer. It is the item's id (SPEC §5) while
 * the store was never restored. A restore sends the id sequence back, so an id may come again, and
 * a copy of another deployment brings items whose ids this one's items had too: the random id of
 * the generation the item was added in (or keyed anew in) then joins its id (SPEC §18, §24):
 * `4711-9f86d081884c7d65`. An item of a generation without an id (restored before they had one)
 * keeps `<id>-g<generation>`, so no key already sent ever changes.
 */
export function idempotencyKeyOf(item: { workItemId: number; storeGeneration: number; generationId: string | null }): string {
  if (item.generationId !== null) return `${item.workItemId}-${item.generationId}`;
  return item.storeGeneration === 0 ? String(item.workItemId) : `${item.workItemId}-g${item.storeGeneration}`;
}

export interface AuthoritySubmission {
  /** idempotencyKeyOf(the work item). */
  idempotencyKey: string;
  workType: string;
  /** The normalised request body the integrator submitted. */
  request: Record<string, unknown>;
}

export interface FieldReason {
  field: string;
  message: string;
}

/** The answer to `submit`. `rejected`: the syntax check failed; final. */
export type SubmitAnswer = { kind: "accepted"; applicationNumber: string } | { kind: "rejected"; message: string; reasons: FieldReason[] };

/** The answer to `status`. `unknown`: the Authority does not know the application number (any more). */
export type StatusAnswer =
  | { kind: "pending" }
  | { kind: "registered"; registrationNumber: string; registeredAt: string }
  | { kind: "rejected"; message: string; reasons: FieldReason[] }
  | { kind: "unknown" };

/**
 * The answer to `change` and `withdraw` (SPEC §15). `rejected`: the Authority refuses it (the
 * merged document breaks a rule, or the application is rejected, withdrawn or unknown); final.
 */
export type FollowUpAnswer = { kind: "accepted" } | { kind: "rejected"; message: string; reasons: FieldReason[] };

/** A change or withdrawal of a filed application, keyed by idempotencyKeyOf(its own work item). */
export interface AuthorityFollowUp {
  idempotencyKey: string;
  applicationNumber: string;
}

/**
 * What each kind of follow-up carries besides its key and application number: the body the
 * Authority is sent.
 */
export interface FollowUpPayloads {
  /** The declaration fields to change. */
  change: { changes: Record<string, unknown> };
  /** Why the document is withdrawn. */
  withdraw: { reason: string };
}

/** One call per kind of follow-up, named after the kind: `adapter.change(…)`, `adapter.withdraw(…)`. */
export type FollowUpCalls = {
  [K in FollowUpKind]: (followUp: AuthorityFollowUp & FollowUpPayloads[K], span?: Span) => Promise<FollowUpAnswer>;
};

/**
 * The follow-up calls of an adapter that files every kind alike (the `http` one): `file` is given
 * the kind and the follow-up, its payload included.
 */
export function followUpCalls(file: (kind: FollowUpKind, followUp: AuthorityFollowUp & Record<string, unknown>, span?: Span) => Promise<FollowUpAnswer>): FollowUpCalls {
  const entries = FOLLOW_UP_KINDS.map((kind) => [kind, (followUp: AuthorityFollowUp & Record<string, unknown>, span?: Span) => file(kind, followUp, span)]);
  return Object.fromEntries(entries) as FollowUpCalls;
}

/**
 * One way of reaching an Authority; a new work type's Authority means one new adapter in src/bot/.
 * Each call may be given its span (SPEC §17): an adapter that can sends it on (the `http` one as
 * `traceparent`) and describes the exchange on it.
 */
export interface AuthorityAdapter extends FollowUpCalls {
  readonly name: string;
  /** Files one item. Throws `AuthorityUnavailableError` (retryable) or `AuthorityProtocolError` (not). */
  submit(submission: AuthoritySubmission, span?: Span): Promise<SubmitAnswer>;
  /** Asks for the decision on a filed item. Throws as `submit` does. */
  status(applicationNumber: string, span?: Span): Promise<StatusAnswer>;
  // And one call per kind of follow-up (FollowUpCalls): changes declaration fields of a filed
  // application, withdraws it. Each throws as `submit` does.
  close(): Promise<void>;
}

/** Timeout, connection refused, 5xx, 429, or an answer we cannot read: the same call may well succeed later. */
export class AuthorityUnavailableError extends Error implements RetryableError {
  override name = "AuthorityUnavailableError";
  readonly retryable = true;
}

/**
 * The Authority did not answer within AUTHORITY_TIMEOUT_MS. The attempt has failed, but the
 * Authority may still be working on it, so its connection stays open until `connectionEnded`
 * (its answer, or AUTHORITY_ABANDON_MS): until then the call still counts against the
 * Authority's capacity (SPEC §20). Its late answer is not used.
 */
export class AuthorityTimeoutError extends AuthorityUnavailableError {
  override name = "AuthorityTimeoutError";
  constructor(
    message: string,
    readonly connectionEnded: Promise<void>,
  ) {
    super(message);
  }
}

/** The Authority refused the call itself (an unexpected 4xx): calling again will not help. */
export class AuthorityProtocolError extends Error implements RetryableError {
  override name = "AuthorityProtocolError";
  readonly retryable = false;
}

/**
 * The Authority refused our call itself: 401, 403, 404 or 405 (a wrong AUTHORITY_URL, or revoked
 * credentials after a deploy). Our fault, not the document's: the gate stops filing as an open
 * breaker does, spending no attempt, until operators put it right.
 */
export class AuthorityMisconfiguredError extends Error implements RetryableError {
  override name = "AuthorityMisconfiguredError";
  readonly retryable = true;
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The answers to a call that say the call itself is wrong, not the document. */
export const MISCONFIGURED_STATUSES = new Set([401, 403, 404, 405]);

/**
 * Submit: `POST {AUTHORITY_URL}/v1/registrations` with header `Idempotency-Key` and a
 * `RegistrationRequest` body → 202 (or 200 on a replay) `ApplicationAccepted`, or 422
 * `RegistrationRejected` when the body fails the syntax check.
 * Status: `GET {AUTHORITY_URL}/v1/registrations/{applicationNumber}` → 200 `ApplicationStatus`,
 * or 404 when the application number is unknown.
 * Change: `POST …/{applicationNumber}/changes` with `Idempotency-Key` and `{changes}`; withdraw:
 * `POST …/{applicationNumber}/withdrawal` with `Idempotency-Key` and `{reason}`. Each → 200
 * `FollowUpAccepted` (the same again for the same key), 422 `RegistrationRejected`, or 404 when
 * the application number is unknown.
 */
export const REGISTRATIONS_PATH = "/v1/registrations";

/** Carries `AuthoritySubmission.idempotencyKey`; the same key always gets the first answer. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

export interface RegistrationRequest {
  workType: string;
  request: Record<string, unknown>;
}

/**
 * Each kind of follow-up on the wire: where it is posted, after `…/{applicationNumber}`, and its
 * payload, read from the request the integrator's AddWorkItem<Kind> stored. Keyed by kind, so a
 * new kind is a compile error here until it has both.
 */
export const FOLLOW_UP_WIRE: { [K in FollowUpKind]: { path: string; payloadOf(request: Record<string, unknown>): FollowUpPayloads[K] } } = {
  change: { path: "/changes", payloadOf: (request) => ({ changes: (request.changes ?? {}) as Record<string, unknown> }) },
  withdraw: { path: "/withdrawal", payloadOf: (request) => ({ reason: String(request.reason ?? "") }) },
};

export interface FollowUpAccepted {
  applicationNumber: string;
  /** The document's revision at the Authority after this change (0 for a withdrawal of an unchanged one). */
  revision: number;
}

export interface ApplicationAccepted {
  applicationNumber: string;
}

export type ApplicationStatus =
  | { status: "pending"; applicationNumber: string }
  | { status: "registered"; applicationNumber: string; registrationNumber: string; /** ISO 8601. */ registeredAt: string }
  | { status: "rejected"; applicationNumber: string; code: string; message: string; reasons: FieldReason[] };

export interface RegistrationRejected {
  code: string;
  message: string;
  reasons: FieldReason[];
}
