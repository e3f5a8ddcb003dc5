/** The RFC 9457 problem details every error answers with, for the OpenAPI document. */
import { Type } from "@sinclair/typebox";
import { errorCatalogue } from "../../errors.ts";

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

/** Response entries for the given statuses, as problem+json. */
export function problemResponses(...statuses: number[]) {
  const responses: Record<number, { description: string; content: { "application/problem+json": { schema: typeof ProblemDetails } } }> = {};
  for (const status of statuses) {
    responses[status] = { description: descriptions[status] ?? "error", content: { "application/problem+json": { schema: ProblemDetails } } };
  }
  return responses;
}
