/**
 * GET /api/Operator/WorkItems (SPEC §12.2): items across companies, newest first, with the
 * integrator list's filters plus company and the authority's numbers, and a keyset cursor.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkItemStatus } from "../../domain/views.ts";
import { PositiveId } from "../shared/ids.ts";
import { toInstant } from "../shared/instant.ts";
import { decodeCursor, keysetPage } from "../shared/keyset-cursor.ts";
import { EXAMPLE_OPERATOR_ITEM, OPERATOR_TAG, OperatorWorkItemView, operatorResponses, operatorSecurity, PageCursor, pageLimit } from "./schemas.ts";

const DEFAULT_LIMIT = 50;
const Filter = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const OperatorWorkItemsQuery = Type.Object({
  companyId: Type.Optional(PositiveId("only items of this company")),
  status: Type.Optional(WorkItemStatus),
  customerReference: Type.Optional(Filter("only items with this customer reference")),
  applicationNumber: Type.Optional(Filter("only the item the authority holds under this application number")),
  registrationNumber: Type.Optional(Filter("only the item registered under this number")),
  deadlineBefore: Type.Optional(Type.String({ format: "date-time", description: "only items whose deadlineAt is before this instant" })),
  limit: Type.Optional(pageLimit(DEFAULT_LIMIT, 500)),
  cursor: Type.Optional(PageCursor),
});
type OperatorWorkItemsQuery = Static<typeof OperatorWorkItemsQuery>;

export const OperatorWorkItemPage = Type.Object(
  {
    items: Type.Array(OperatorWorkItemView),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: "pass as cursor to get the next page; null on the last page" }),
  },
  { title: "OperatorWorkItemPage", description: "one page of work items across companies, newest first", examples: [{ items: [EXAMPLE_OPERATOR_ITEM], nextCursor: "djE6NDcxMQ" }] },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: OperatorWorkItemsQuery }>("/api/Operator/WorkItems", {
    schema: {
      summary: "List work items across companies, newest first, with filters and a keyset cursor",
      operationId: "OperatorListWorkItems",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      querystring: OperatorWorkItemsQuery,
      response: { 200: OperatorWorkItemPage, ...operatorResponses(400) },
    },
    handler: async (request) => {
      // Named one by one: a spread would hand the store any name the query carried.
      const { companyId, status, customerReference, applicationNumber, registrationNumber, deadlineBefore, limit = DEFAULT_LIMIT, cursor } = request.query;
      const items = await ctx.store.listAllWorkItems({
        companyId,
        status,
        customerReference,
        applicationNumber,
        registrationNumber,
        deadlineBefore: deadlineBefore === undefined ? undefined : toInstant(deadlineBefore, "deadlineBefore"),
        beforeWorkItemId: cursor === undefined ? undefined : decodeCursor(cursor),
        limit: limit + 1,
      });
      const page = keysetPage(items, limit, (item) => item.workItemId);
      return { items: page.rows, nextCursor: page.nextCursor };
    },
  });
}
