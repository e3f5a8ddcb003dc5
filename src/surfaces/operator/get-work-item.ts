/**
 * GET /api/Operator/WorkItems/{workItemId} (SPEC §12.2): one item of any company with every
 * recorded step, oldest first: created, state changes, calls to the authority, webhook attempts
 * and operator actions with who and why.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { Nullable, WorkItemStatus } from "../../domain/views.ts";
import { ApiError } from "../../errors.ts";
import { TIMELINE_KINDS } from "../../store/types/operator-reads.ts";
import { EXAMPLE_OPERATOR_ITEM, OPERATOR_TAG, OperatorWorkItemParams, OperatorWorkItemView, operatorResponses, operatorSecurity } from "./schemas.ts";

export const OperatorRef = Type.Object(
  { operatorId: Type.String({ examples: ["op_5b0f0e4c6a7d4e2f9c1b3a5d7e9f1a2b"] }), email: Type.String({ examples: ["ops@example.com"] }) },
  { title: "OperatorRef", description: "the operator who acted" },
);

export const TimelineEntry = Type.Object(
  {
    at: Type.String({ format: "date-time" }),
    kind: Type.Union(TIMELINE_KINDS.map((kind) => Type.Literal(kind)), {
      description: "created; status: a state change; attempt: a call to the authority; webhook: a delivery attempt; operator: an operator's action; change, withdraw: one of the item's changes or its withdrawal (its work item id in detail)",
    }),
    status: Nullable(WorkItemStatus),
    detail: Nullable(Type.String({ description: "what happened: the authority's answer or error, the delivery's outcome, the action" })),
    operator: Nullable(OperatorRef),
    reason: Nullable(Type.String({ description: "the operator's reason" })),
  },
  { title: "TimelineEntry", description: "one recorded step of a work item; fields that do not apply are null" },
);

export const OperatorWorkItemDetail = Type.Composite([OperatorWorkItemView, Type.Object({ timeline: Type.Array(TimelineEntry, { description: "oldest first" }) })], {
  title: "OperatorWorkItemDetail",
  description: "a work item of any company with its timeline",
  examples: [
    {
      ...EXAMPLE_OPERATOR_ITEM,
      timeline: [
        { at: "2026-11-21T14:03:12.000Z", kind: "created", status: "New", detail: "In batch 17", operator: null, reason: null },
        { at: "2026-11-21T14:04:01.000Z", kind: "attempt", status: null, detail: "accepted: RVDM-A-7Q2M9K4XWD", operator: null, reason: null },
        { at: "2026-11-21T14:04:02.000Z", kind: "status", status: "Successful", detail: null, operator: null, reason: null },
      ],
    },
  ],
});

export const operatorWorkItemNotFound = (workItemId: number) => new ApiError("NOT_FOUND", `Work item ${workItemId} does not exist.`);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: Static<typeof OperatorWorkItemParams> }>("/api/Operator/WorkItems/:workItemId", {
    schema: {
      summary: "Read one work item of any company with its timeline",
      operationId: "OperatorGetWorkItem",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: OperatorWorkItemParams,
      response: { 200: OperatorWorkItemDetail, ...operatorResponses(400, 404) },
    },
    handler: async (request) => {
      const found = await ctx.store.getWorkItemTimeline(request.params.workItemId);
      if (!found) throw operatorWorkItemNotFound(request.params.workItemId);
      return { ...found.item, timeline: found.timeline };
    },
  });
}
