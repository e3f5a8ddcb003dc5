/**
 * GET /api/Operator/WorkItems (SPEC §12.2, §25): items across companies with every filter of the
 * console's Work items list, newest first or by deadline, a keyset cursor for either order, the
 * total, and each item's company name and deadline mark. The list itself is
 * operators/work-item-list.ts, which the console's page calls too.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { DUE_FILTERS } from "../../domain/due.ts";
import { ITEM_ORDERS } from "../../domain/item-order.ts";
import { Nullable, WorkItemKind, WorkItemStatus } from "../../domain/views.ts";
import { dueCalendarOf, listWorkItems, MAX_NAMED_COMPANIES, TOTAL_CAP } from "../../operators/work-item-list.ts";
import { PositiveId } from "../shared/ids.ts";
import { toInstant } from "../shared/instant.ts";
import { EXAMPLE_LISTED_ITEM, OneOf, OPERATOR_TAG, OperatorListedWorkItem, operatorResponses, operatorSecurity, PageCursor, pageLimit } from "./schemas.ts";

const DEFAULT_LIMIT = 50;
const Filter = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const OperatorWorkItemsQuery = Type.Object({
  company: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: `only items of this company: its number (42, or #42), or the start of its name in any letter case, which takes every company whose name starts so (at most ${MAX_NAMED_COMPANIES}); not with companyId`,
      examples: ["Acme"],
    }),
  ),
  companyId: Type.Optional(PositiveId("only items of the company with this number")),
  status: Type.Optional(WorkItemStatus),
  kind: Type.Optional(WorkItemKind),
  due: Type.Optional(
    OneOf(DUE_FILTERS, {
      description:
        "New items by deadline, as the console's filters: overdue (the deadline has passed) or today (not overdue, and due before the end of today in CONSOLE_TZ; on a weekend or public holiday, of the next working day)",
      examples: ["overdue"],
    }),
  ),
  customerReference: Type.Optional(Filter("only items with this customer reference")),
  applicationNumber: Type.Optional(Filter("only the item the authority holds under this application number")),
  registrationNumber: Type.Optional(Filter("only the item registered under this number")),
  workBatchId: Type.Optional(PositiveId("only the items of this batch; with companyId or company")),
  deadlineBefore: Type.Optional(Type.String({ format: "date-time", description: "only items whose deadlineAt is before this instant" })),
  order: Type.Optional(
    OneOf(ITEM_ORDERS, {
      description:
        "newest (the default): newest first. deadline: what still needs the bot first: New, InProgress and Submitted items before the others; in each, the earliest deadline first and items without one last; ties oldest first",
      examples: ["deadline"],
    }),
  ),
  limit: Type.Optional(pageLimit(DEFAULT_LIMIT, 500)),
  cursor: Type.Optional(PageCursor),
});
type OperatorWorkItemsQuery = Static<typeof OperatorWorkItemsQuery>;

export const OperatorWorkItemPage = Type.Object(
  {
    items: Type.Array(OperatorListedWorkItem),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: "pass as cursor, with the same filters and order, to get the next page; null on the last page" }),
    total: Nullable(Type.Integer({ minimum: 0, description: `how many items match the filters (every page, not this one), counted exactly; null when totalEstimate is given instead` })),
    totalEstimate: Nullable(
      Type.Integer({
        minimum: TOTAL_CAP + 1,
        description: `when more than ${TOTAL_CAP.toLocaleString("en")} items match and counting them exactly would read them all: an estimate from a sample of 10,000 ids spread over every item; null when total is exact`,
      }),
    ),
  },
  {
    title: "OperatorWorkItemPage",
    description: "one page of work items across companies, in the order asked for",
    examples: [{ items: [EXAMPLE_LISTED_ITEM], nextCursor: "djE6NDcxMQ", total: 1234, totalEstimate: null }],
  },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  const calendar = dueCalendarOf(ctx.config);
  app.get<{ Querystring: OperatorWorkItemsQuery }>("/api/Operator/WorkItems", {
    schema: {
      summary: "List work items across companies, newest first or by deadline, with the console's filters, a keyset cursor and the total",
      operationId: "OperatorListWorkItems",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      querystring: OperatorWorkItemsQuery,
      response: { 200: OperatorWorkItemPage, ...operatorResponses(400) },
    },
    handler: async (request) => {
      // Named one by one: a spread would hand the list any name the query carried.
      const { company, companyId, status, kind, due, customerReference, applicationNumber, registrationNumber, workBatchId, deadlineBefore, order, limit, cursor } = request.query;
      const page = await listWorkItems(ctx.store, calendar, {
        company,
        companyId,
        status,
        kind,
        due,
        customerReference,
        applicationNumber,
        registrationNumber,
        workBatchId,
        deadlineBefore: deadlineBefore === undefined ? undefined : toInstant(deadlineBefore, "deadlineBefore"),
        order: order ?? "newest",
        cursor,
        limit: limit ?? DEFAULT_LIMIT,
      });
      return { items: page.items, nextCursor: page.nextCursor, total: page.total, totalEstimate: page.totalEstimate };
    },
  });
}
