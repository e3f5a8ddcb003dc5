/** GET /api/AuthorityRvdm/WorkBatch/{workBatchId}: one batch of the caller's company, with counts. */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkBatchView } from "../../domain/views.ts";
import { ApiError } from "../../errors.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { PositiveId } from "../shared/ids.ts";

const WorkBatchParams = Type.Object({ workBatchId: PositiveId("the work batch id") });

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: Static<typeof WorkBatchParams> }>("/api/AuthorityRvdm/WorkBatch/:workBatchId", {
    schema: {
      summary: "Read one work batch with its item counts per status",
      operationId: "GetWorkBatch",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      params: WorkBatchParams,
      response: { 200: WorkBatchView, ...guardedResponses(400, 404) },
    },
    handler: async (request) => {
      const batch = await ctx.store.getWorkBatch(request.tenant.companyId, request.params.workBatchId);
      if (!batch) throw new ApiError("NOT_FOUND", `Work batch ${request.params.workBatchId} does not exist.`);
      return batch;
    },
  });
}
