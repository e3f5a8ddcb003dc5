/**
 * GET /api/Operator/Companies/{companyId}/Export?since= (SPEC §22), admin only: the company's items
 * as JSON Lines (application/x-ndjson), in id order, each line its view and its timeline as
 * `GET /api/Operator/WorkItems/{id}` answers it; streamed a page at a time, so memory stays flat
 * however many items the company has. The same stream as `companies export`.
 */
import { Readable } from "node:stream";
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { exportLines, parseSince } from "../../admin/company-export.ts";
import { ApiError } from "../../errors.ts";
import { requireAdmin } from "../../operators/operator-guard.ts";
import { CompanyParams, companyNotFound } from "./erase-company.ts";
import { OperatorWorkItemDetail } from "./get-work-item.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity } from "./schemas.ts";

export const JSON_LINES = "application/x-ndjson";

const ExportQuery = Type.Object({
  since: Type.Optional(
    Type.String({ minLength: 10, maxLength: 40, description: "only the items added since: a date (its start, UTC) or an ISO 8601 instant", examples: ["2026-11-01"] }),
  ),
});

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: Static<typeof CompanyParams>; Querystring: Static<typeof ExportQuery> }>("/api/Operator/Companies/:companyId/Export", {
    schema: {
      summary: "Export a company's items as JSON Lines, each its view and its timeline (admin)",
      description: `A stream of ${JSON_LINES}: one line per item in id order, each as OperatorGetWorkItem answers it.`,
      operationId: "OperatorExportCompany",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: CompanyParams,
      querystring: ExportQuery,
      response: {
        200: {
          description: "one line per item, in id order",
          content: { [JSON_LINES]: { schema: OperatorWorkItemDetail, example: (OperatorWorkItemDetail.examples as unknown[])[0] } },
        },
        ...operatorResponses(400, 404),
      },
    },
    onRequest: requireAdmin,
    handler: async (request, reply) => {
      const { companyId } = request.params;
      const since = request.query.since === undefined ? undefined : parseSince(request.query.since);
      if (request.query.since !== undefined && since === undefined) {
        throw new ApiError("VALIDATION_FAILED", "since must be a date (2026-11-28) or an ISO 8601 instant (2026-11-28T09:00:00Z).");
      }
      if (!(await ctx.store.getCompany(companyId))) throw await companyNotFound(ctx, companyId);
      return reply.type(JSON_LINES).send(Readable.from(exportLines(ctx.store, companyId, since === undefined ? {} : { since })));
    },
  });
}
