/**
 * POST /api/Operator/WorkItems/Retry (SPEC §12.2): retries every Failed item that matches, as the
 * single Retry does, at most MAX_RETRIED per call. Each chunk is its own transaction, so a large
 * retry never holds locks that intake or the bot wait on for long; a call cut short by a crash
 * has retried whole chunks, and calling again picks up the rest (retried items are no longer Failed).
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { operatorAction, requireActingRole } from "../../operators/operator-guard.ts";
import { PositiveId } from "../shared/ids.ts";
import { toInstant } from "../shared/instant.ts";
import { OneOf, OPERATOR_TAG, operatorResponses, operatorSecurity, Reason } from "./schemas.ts";

export const MAX_RETRIED = 10_000;
const CHUNK = 100;

export const OperatorRetryFilter = Type.Object(
  {
    reason: Reason,
    status: OneOf(["Failed"], { description: "only Failed items can be retried; stated so that the call reads as what it does" }),
    companyId: Type.Optional(PositiveId("only items of this company")),
    failedAfter: Type.Optional(Type.String({ format: "date-time", description: "only items that failed at or after this instant" })),
    code: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "only items whose error has this code", examples: ["AUTHORITY_UNAVAILABLE"] })),
  },
  {
    title: "OperatorRetryFilter",
    additionalProperties: false,
    examples: [{ reason: "authority outage on 23 Nov, resubmitting", status: "Failed", code: "AUTHORITY_UNAVAILABLE", failedAfter: "2026-11-23T08:00:00Z" }],
  },
);
type OperatorRetryFilter = Static<typeof OperatorRetryFilter>;

export const OperatorRetried = Type.Object(
  { retried: Type.Integer({ minimum: 0, maximum: MAX_RETRIED, description: `how many items went back to New (at most ${MAX_RETRIED}; call again for more)` }) },
  { title: "OperatorRetried", description: "how many items the call retried", examples: [{ retried: 37 }] },
);

/**
 * Calls `retryChunk(limit)` until it retries fewer than it was allowed (nothing more matches) or
 * `max` items are retried; resolves to how many.
 */
export async function retryInChunks(retryChunk: (limit: number) => Promise<number>, max = MAX_RETRIED, chunk = CHUNK): Promise<number> {
  let retried = 0;
  while (retried < max) {
    const limit = Math.min(chunk, max - retried);
    const count = await retryChunk(limit);
    retried += count;
    if (count < limit) break;
  }
  return retried;
}

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: OperatorRetryFilter }>("/api/Operator/WorkItems/Retry", {
    schema: {
      summary: "Retry every Failed work item that matches the filter, across companies",
      description: `Each match goes back to New as with the single Retry, oldest failure first, at most ${MAX_RETRIED} per call.`,
      operationId: "OperatorRetryWorkItems",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      body: OperatorRetryFilter,
      response: { 200: OperatorRetried, ...operatorResponses(400, 413, 415) },
    },
    onRequest: requireActingRole,
    handler: async (request) => {
      const { reason, companyId, failedAfter, code } = request.body;
      const filter = { companyId, code, failedAfter: failedAfter === undefined ? undefined : toInstant(failedAfter, "failedAfter") };
      const action = operatorAction(request, reason);
      const retried = await retryInChunks((limit) => ctx.store.retryWorkItems(filter, { batchMaxItems: ctx.config.batchMaxItems, limit }, action));
      return { retried };
    },
  });
}
