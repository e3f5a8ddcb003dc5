/** The RFC 9457 problem details every error answers with, for the OpenAPI document. */
import { Type } from "@sinclair/typebox";
import { errorCatalogue, problemTypeFor, type ErrorCode } from "../errors.ts";

const problemFields = {
  type: Type.String({ examples: ["urn:work-item-api:problem:state-conflict"] }),
  title: Type.String({ examples: [errorCatalogue.STATE_CONFLICT.title] }),
  status: Type.Integer({ examples: [409] }),
  detail: Type.String({ examples: ["Work item 4711 is InProgress; only a New item of an Open batch can be cancelled."] }),
  instance: Type.String({ examples: ["/api/AuthorityRvdm/WorkItem/4711"] }),
  traceId: Type.String({ description: "the request id, as in the server's log line", examples: ["4c0f6c1e-4a53-4d8e-9d2f-1f0e6c2b9a11"] }),
  code: Type.Optional(
    Type.String({
      description: "why, where a status has more than one reason: a 409 of AddWorkItemChange or AddWorkItemWithdraw says ORIGINAL_CLOSED, WITHDRAWAL_PENDING or CHANGE_CUTOFF_PASSED",
      examples: ["ORIGINAL_CLOSED"],
    }),
  ),
};

export const ProblemDetails = Type.Object(problemFields, { title: "ProblemDetails", description: "RFC 9457 problem details" });

/** Every 400: ASP.NET's ValidationProblemDetails, every problem of the request at once. */
export const ValidationProblemDetails = Type.Object(
  {
    ...problemFields,
    errors: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: "field path -> messages; `$` names the body as a whole (e.g. JSON that cannot be read)",
      examples: [{ "senderChamberOfCommerceNo.sendValue": ["is required"], plannedLoad: ["must be ≥ 0"] }],
    }),
  },
  { title: "ValidationProblemDetails", description: "RFC 9457 problem details with the field errors of a 400" },
);

const descriptions: Record<number, string> = {
  400: "malformed JSON, schema violation, bad webhook address, or a query parameter given more than once (unknown ones are ignored)",
  401: "missing, invalid or expired token, or wrong credentials",
  403: "token without role ApiKey, or an operator token",
  404: "unknown id, or an id of another company",
  405: "wrong method on a known path",
  409: "state conflict, or the same Idempotency-Key still in flight",
  413: "body over the size limit",
  415: "Content-Type is not JSON",
  422: "Idempotency-Key reused with a different body",
  429: "rate limit; see Retry-After",
  503: "store unavailable; see Retry-After",
};

/** The catalogue entry and a typical detail each status is documented with. */
const exampleFor: Record<number, { code: ErrorCode; detail: string; errors?: Record<string, string[]> }> = {
  400: {
    code: "VALIDATION_FAILED",
    detail: "See errors for every problem found in the request.",
    errors: { "senderChamberOfCommerceNo.sendValue": ["is required"], plannedLoad: ["must be ≥ 0"] },
  },
  401: { code: "UNAUTHORIZED", detail: "The token has expired." },
  403: { code: "FORBIDDEN", detail: "This route requires a token with role ApiKey." },
  404: { code: "NOT_FOUND", detail: "Work item 4711 does not exist." },
  405: { code: "METHOD_NOT_ALLOWED", detail: "PUT is not allowed here; use GET." },
  409: { code: "STATE_CONFLICT", detail: "Work item 4711 is InProgress; only a New item of an Open batch can be cancelled." },
  413: { code: "PAYLOAD_TOO_LARGE", detail: "The request body exceeds the size limit." },
  415: { code: "UNSUPPORTED_MEDIA_TYPE", detail: "Send the body as application/json." },
  422: { code: "IDEMPOTENCY_KEY_REUSED", detail: "This Idempotency-Key was first used with a different body; use a new key for a new request." },
  429: { code: "RATE_LIMITED", detail: "Too many requests; retry after the time in Retry-After." },
  503: { code: "STORE_UNAVAILABLE", detail: "The store is unavailable; retry shortly." },
};

/** A problem body as the API answers it for `status`, for the reference page. */
export function problemExample(status: number, instance = "/api/AuthorityRvdm/WorkItem/4711"): Record<string, unknown> {
  const example = exampleFor[status] ?? { code: "INTERNAL" as const, detail: "An unexpected error occurred." };
  return {
    type: problemTypeFor(example.code),
    title: errorCatalogue[example.code].title,
    status,
    detail: example.detail,
    instance,
    traceId: "4c0f6c1e-4a53-4d8e-9d2f-1f0e6c2b9a11",
    ...(example.errors ? { errors: example.errors } : {}),
  };
}

const retryAfter = (description: string) => ({ "Retry-After": { type: "integer", minimum: 1, description } });

/** The headers each status sets (SPEC §2, §7): documented beside the body. */
const headersFor: Record<number, Record<string, Record<string, unknown>>> = {
  401: {
    "WWW-Authenticate": {
      type: "string",
      description: 'Bearer realm="work-item-api", plus error="invalid_token" and error_description when a token was sent',
    },
  },
  405: { Allow: { type: "string", description: "the methods this path has, e.g. `GET, HEAD, DELETE`" } },
  409: retryAfter("seconds to wait; sent only while the first request with this Idempotency-Key is in flight"),
  429: retryAfter("seconds until a retry can succeed"),
  503: retryAfter("seconds to wait before retrying"),
};

/** Response entries for the given statuses, as problem+json with an example body and the headers each sets. */
export function problemResponses(...statuses: number[]) {
  type Media = { schema: typeof ProblemDetails | typeof ValidationProblemDetails; example: Record<string, unknown> };
  type Entry = { description: string; headers?: Record<string, Record<string, unknown>>; content: { "application/problem+json": Media } };
  const responses: Record<number, Entry> = {};
  for (const status of statuses) {
    const media = { schema: status === 400 ? ValidationProblemDetails : ProblemDetails, example: problemExample(status) };
    const headers = headersFor[status];
    responses[status] = { description: descriptions[status] ?? "error", ...(headers ? { headers } : {}), content: { "application/problem+json": media } };
  }
  return responses;
}

/** What every route behind the bearer guard can answer besides its own statuses (SPEC §11.4). */
export const GUARDED_STATUSES = [401, 403, 405, 429, 503] as const;

/** A protected route's problem answers: its own statuses and those of the bearer guard and the router. */
export const guardedResponses = (...statuses: number[]) => problemResponses(...new Set([...statuses, ...GUARDED_STATUSES].sort()));

/** A public route's problem answers: its own statuses and the router's 405 for another method. */
export const publicResponses = (...statuses: number[]) => problemResponses(...new Set([...statuses, 405].sort()));
