/** GET /api/AuthorityRvdm/WorkItem/{workItemId}: one item of the caller's company. */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkItemView } from "../../domain/views.ts";
import { ApiError } from "../../errors.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { PositiveId } from "../shared/ids.ts";
import { JSON_TEXT_TYPE } from "../shared/json-text.ts";

export const WorkItemParams = Type.Object({ workItemId: PositiveId("the work item id") });

export const workItemNotFound = (workItemId: number) => new ApiError("NOT_FOUND", `Work item ${workItemId} does not exist.`);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: Static<typeof WorkItemParams> }>("/api/AuthorityRvdm/WorkItem/:workItemId", {
    schema: {
      summary: "Read one work item: status, result or error, attempts and timestamps",
      operationId: "GetWorkItem",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      params: WorkItemParams,
      response: { 200: WorkItemView, ...guardedResponses(400, 404) },
    },
    handler: async (request, reply) => {
      const item = await ctx.store.getWorkItemJson(request.tenant.companyId, request.params.workItemId);
      if (item === undefined) throw workItemNotFound(request.params.workItemId);
      // The view as the database wrote it (store/core/item-json.ts); the schema above documents it.
      return reply.type(JSON_TEXT_TYPE).send(item);
    },
  });
}
