/**
 * GET /api/AuthorityRvdm/WorkItems: the caller's items, newest first, with keyset pagination.
 * The cursor is opaque to clients; it holds the id of the last item of the page.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkItemKind, WorkItemPage, WorkItemStatus } from "../../domain/views.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { PositiveId } from "../shared/ids.ts";
import { toInstant } from "../shared/instant.ts";
import { decodeCursor, keysetPage } from "../shared/keyset-cursor.ts";
import { JSON_TEXT_TYPE } from "../shared/json-text.ts";

const DEFAULT_LIMIT = 50;

export const WorkItemsQuery = Type.Object({
  status: Type.Optional(WorkItemStatus),
  kind: Type.Optional(WorkItemKind),
  originalWorkItemId: Type.Optional(PositiveId("only the changes and withdrawals of this create item")),
  customerReference: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  workBatchId: Type.Optional(PositiveId("only items of this batch")),
  deadlineBefore: Type.Optional(
    Type.String({ format: "date-time", description: "only items whose deadlineAt is before this instant (items without a deadline never match)" }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_LIMIT, description: "page size, 1–200 (default 50)" })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "nextCursor of the previous page" })),
});
type WorkItemsQuery = Static<typeof WorkItemsQuery>;

const canonicalizeQuery = createCanonicalizer(WorkItemsQuery);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: WorkItemsQuery }>("/api/AuthorityRvdm/WorkItems", {
    schema: {
      summary: "List the company's work items, newest first, with filters and a keyset cursor",
      operationId: "ListWorkItems",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      querystring: WorkItemsQuery,
      response: { 200: WorkItemPage, ...guardedResponses(400) },
    },
    preValidation: async (request) => {
      request.query = canonicalizeQuery(request.query) as WorkItemsQuery;
    },
    handler: async (request, reply) => {
      const { status, kind, originalWorkItemId, customerReference, workBatchId, deadlineBefore, limit = DEFAULT_LIMIT, cursor } = request.query;
      const items = await ctx.store.listWorkItemsJson(request.tenant.companyId, {
        status,
        kind,
        originalWorkItemId,
        customerReference,
        workBatchId,
        deadlineBefore: deadlineBefore === undefined ? undefined : toInstant(deadlineBefore, "deadlineBefore"),
        beforeWorkItemId: cursor === undefined ? undefined : decodeCursor(cursor),
        limit: limit + 1,
      });
      return reply.type(JSON_TEXT_TYPE).send(workItemPageText(items, limit));
    },
  });
}

/**
 * A WorkItemPage of views as the database wrote them (store/core/item-json.ts), from the rows
 * read with `limit + 1`. The bench's Fastify floor builds its pages with it too.
 */
export function workItemPageText(items: Array<{ workItemId: number; json: string }>, limit: number): string {
  const page = keysetPage(items, limit, (item) => item.workItemId);
  return `{"items":[${page.rows.map((item) => item.json).join(",")}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}
