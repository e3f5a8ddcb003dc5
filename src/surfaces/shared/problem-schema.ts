/** The RFC 9457 problem details every error answers with, for the OpenAPI document. */
import { Type } from "@sinclair/typebox";
import { errorCatalogue, problemTypeFor, type ErrorCode } from "../../errors.ts";

export const ProblemDetails = Type.Object(
  {
    type: Type.String({ examples: ["urn:work-item-api:problem:validation-failed"] }),
    title: Type.String({ examples: [errorCatalogue.VALIDATION_FAILED.title] }),
    status: Type.Integer({ examples: [400] }),
    detail: Type.String({ examples: ["See errors for every problem found in the request."] }),
    instance: Type.String({ examples: ["/api/AuthorityRvdm/AddWorkItemCreate"] }),
    traceId: Type.String({ description: "the request id, as in the server's log line", examples: ["4c0f6c1e-4a53-4d8e-9d2f-1f0e6c2b9a11"] }),
    errors: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: "validation errors only: field path -> messages",
        examples: [{ "senderChamberOfCommerceNo.sendValue": ["is required"], plannedLoad: ["must be ≥ 0"] }],
      }),
    ),
  },
  { title: "ProblemDetails" },
);

const descriptions: Record<number, string> = {
  400: "malformed JSON, schema violation or bad webhook address",
  401: "missing, invalid or expired token, or wrong credentials",
  403: "token without role ApiKey",
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
  422: { code: "IDEMPOTENCY_KEY_REUSED", detail: "This Idempotency-Key was first used with a different body; use a new key for a new item." },
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

/** Response entries for the given statuses, as problem+json with an example body per status. */
export function problemResponses(...statuses: number[]) {
  type Media = { schema: typeof ProblemDetails; example: Record<string, unknown> };
  const responses: Record<number, { description: string; content: { "application/problem+json": Media } }> = {};
  for (const status of statuses) {
    const media = { schema: ProblemDetails, example: problemExample(status) };
    responses[status] = { description: descriptions[status] ?? "error", content: { "application/problem+json": media } };
  }
  return responses;
}
