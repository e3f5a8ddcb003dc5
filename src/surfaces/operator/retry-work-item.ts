/**
 * POST /api/Operator/WorkItems/{workItemId}/Retry (SPEC §12.2): a Failed item goes back to New
 * with its attempts reset, into its company's Open batch, and emits `workitem.retried`.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { registerItemAction } from "./item-action.ts";

export function register(app: FastifyInstance, ctx: AppContext): void {
  registerItemAction(app, {
    verb: "Retry",
    operationId: "OperatorRetryWorkItem",
    summary: "Retry a Failed work item: back to New, attempts reset, in its company's Open batch",
    description: "Answers the item, now New. 409 unless the item is Failed. Emits workitem.retried to the company's event feed and webhook.",
    act: (workItemId, action) => ctx.store.retryWorkItem(workItemId, { batchMaxItems: ctx.config.batchMaxItems }, action),
    conflict: (item) => `Work item ${item.workItemId} is ${item.status}; only a Failed item can be retried.`,
  });
}
