/**
 * POST /api/Operator/Companies/{companyId}/Erase {reason} (SPEC §22), admin only: begins the
 * erase of a company that leaves. Its keys are revoked before the answer (every process refuses
 * them within 5 s); the worker role carries out the rest in bounded steps
 * (admin/company-erasure.ts), and the audit entry `company.erased` says when it ended. Asked
 * again while it runs, the answer is the erase under way.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { operatorAction, requireAdmin } from "../../operators/operator-guard.ts";
import { PositiveId } from "../shared/ids.ts";
import { OperatorCompanyErasure, toErasureView } from "./company-erasure-view.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity, ReasonBody } from "./schemas.ts";

export const CompanyParams = Type.Object({ companyId: PositiveId("the company's id") });

/** A company that is not there: never was, or erased already (then said so). */
export async function companyNotFound(ctx: AppContext, companyId: number): Promise<ApiError> {
  const erased = await ctx.store.lastCompanyErasure(companyId);
  return new ApiError("NOT_FOUND", erased ? `Company ${companyId} was erased at ${erased.erasedAt}; nothing is left of it.` : `Company ${companyId} does not exist.`);
}

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: Static<typeof CompanyParams>; Body: ReasonBody }>("/api/Operator/Companies/:companyId/Erase", {
    schema: {
      summary: "Erase a company that leaves: its keys, its work, then every row of it (admin)",
      description:
        "Its keys are revoked before the answer; the worker role cancels its New items, waits for its calls to the authority to end, then deletes every row of it in short steps. One audit entry company.erased (with the number of items) when it ends. Asked again while it runs, the answer is the erase under way.",
      operationId: "OperatorEraseCompany",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      params: CompanyParams,
      body: ReasonBody,
      response: { 202: OperatorCompanyErasure, ...operatorResponses(400, 404, 413, 415) },
    },
    onRequest: requireAdmin,
    handler: async (request, reply) => {
      const { companyId } = request.params;
      const begun = await ctx.store.beginCompanyErasure(companyId, operatorAction(request, request.body.reason));
      if (begun.kind === "notFound") throw await companyNotFound(ctx, companyId);
      let { erasure } = begun;
      if (erasure.phase === "revoking") erasure = await ctx.store.revokeCompanyKeys(companyId, new Date().toISOString());
      // This process at once; the others within their caches' 2 s.
      ctx.keyStatus.forgetCompany(companyId);
      ctx.loginKeys.forgetCompany(companyId);
      return reply.code(202).send(toErasureView(erasure));
    },
  });
}
