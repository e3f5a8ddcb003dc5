/**
 * POST /api/Operator/WorkItems/{workItemId}/Cancel (SPEC §12.2): as the integrator's cancel, for
 * an item of any company: only a New item in an Open batch, since the bot may already be filing
 * anything later.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { registerItemAction } from "./item-action.ts";

export function register(app: FastifyInstance, ctx: AppContext): void {
  registerItemAction(app, {
    verb: "Cancel",
    operationId: "OperatorCancelWorkItem",
    summary: "Cancel a work item of any company that is still New in an Open batch",
    description: "Answers the item, now Cancelled. 409 when the item is no longer New or its batch is no longer Open.",
    act: (workItemId, action) => ctx.store.operatorCancelWorkItem(workItemId, action),
    conflict: (item) =>
      item.status === "New"
        ? `Work item ${item.workItemId} cannot be cancelled: its batch ${item.workBatchId} is no longer Open and the bot may be filing it.`
        : `Work item ${item.workItemId} cannot be cancelled: it is ${item.status}. Only a New item in an Open batch can be cancelled.`,
  });
}
