/**
 * The operator's actions on one item (Retry, Cancel): `{reason}` in, the item out, 404 for an
 * unknown id and 409 when the item is not in the state the action applies to.
 */
import type { Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../../errors.ts";
import { operatorAction, requireActingRole } from "../../operators/operator-guard.ts";
import type { OperatorAction, OperatorItemOutcome, OperatorWorkItemView as ItemView } from "../../store/store.ts";
import { operatorWorkItemNotFound } from "./get-work-item.ts";
import { OPERATOR_TAG, OperatorWorkItemParams, OperatorWorkItemView, operatorResponses, operatorSecurity, ReasonBody } from "./schemas.ts";

export interface ItemActionRoute {
  /** The last path segment, e.g. Retry. */
  verb: string;
  operationId: string;
  summary: string;
  description: string;
  act(workItemId: number, action: OperatorAction): Promise<OperatorItemOutcome>;
  /** The 409's detail for an item in another state. */
  conflict(item: ItemView): string;
}

export function registerItemAction(app: FastifyInstance, route: ItemActionRoute): void {
  app.post<{ Params: Static<typeof OperatorWorkItemParams>; Body: ReasonBody }>(`/api/Operator/WorkItems/:workItemId/${route.verb}`, {
    schema: {
      summary: route.summary,
      description: route.description,
      operationId: route.operationId,
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: OperatorWorkItemParams,
      body: ReasonBody,
      response: { 200: OperatorWorkItemView, ...operatorResponses(400, 404, 409, 413, 415) },
    },
    onRequest: requireActingRole,
    handler: async (request) => {
      const { workItemId } = request.params;
      const outcome = await route.act(workItemId, operatorAction(request, request.body.reason));
      switch (outcome.kind) {
        case "done":
          return outcome.item;
        case "notFound":
          throw operatorWorkItemNotFound(workItemId);
        case "conflict":
          throw new ApiError("STATE_CONFLICT", route.conflict(outcome.item));
      }
    },
  });
}
