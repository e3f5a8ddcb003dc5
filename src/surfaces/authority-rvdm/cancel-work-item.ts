/**
 * DELETE /api/AuthorityRvdm/WorkItem/{workItemId}: cancel an item the bot has not picked up yet
 * (SPEC §3, §5). Only a New item in an Open batch can be cancelled; anything later is a 409,
 * because the bot may already be filing it with the Authority.
 */
import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkItemView } from "../../domain/views.ts";
import { ApiError } from "../../errors.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { WorkItemParams, workItemNotFound } from "./get-work-item.ts";

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.delete<{ Params: Static<typeof WorkItemParams> }>("/api/AuthorityRvdm/WorkItem/:workItemId", {
    schema: {
      summary: "Cancel a work item that is still New in an Open batch",
      description: "Answers the item with status Cancelled. 409 when the item is no longer New or its batch is no longer Open.",
      operationId: "CancelWorkItem",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      params: WorkItemParams,
      response: { 200: WorkItemView, ...guardedResponses(400, 404, 409) },
    },
    handler: async (request) => {
      const { workItemId } = request.params;
      const outcome = await ctx.store.cancelWorkItem(request.tenant.companyId, workItemId, new Date().toISOString());
      switch (outcome.kind) {
        case "cancelled":
          return outcome.item;
        case "notFound":
          throw workItemNotFound(workItemId);
        case "conflict": {
          const why =
            outcome.item.status !== "New"
              ? `it is ${outcome.item.status}`
              : `its batch ${outcome.item.workBatchId} is ${outcome.batchStatus} and the bot may be filing it`;
          throw new ApiError("STATE_CONFLICT", `Work item ${workItemId} cannot be cancelled: ${why}. Only a New item in an Open batch can be cancelled.`);
        }
      }
    },
  });
}
