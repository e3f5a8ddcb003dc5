/** GET /api/Operator/Erasures (SPEC §22): the erases under way, oldest first; an ended one is in the audit log. */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { OperatorCompanyErasure, toErasureView } from "./company-erasure-view.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity } from "./schemas.ts";

export const OperatorErasures = Type.Object(
  { erasures: Type.Array(OperatorCompanyErasure, { description: "oldest first" }) },
  { title: "OperatorErasures", description: "the erases under way", examples: [{ erasures: OperatorCompanyErasure.examples }] },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get("/api/Operator/Erasures", {
    schema: {
      summary: "List the company erases under way",
      description: "An erase that ended is gone from here; the audit log has its entry company.erased.",
      operationId: "OperatorListErasures",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      response: { 200: OperatorErasures, ...operatorResponses() },
    },
    handler: async () => ({ erasures: (await ctx.store.companyErasures()).map(toErasureView) }),
  });
}
