/**
 * GET /api/Operator/Audit (SPEC §12.2): every operator action, newest first, with a keyset
 * cursor. Entries are kept forever; no route changes or deletes one.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { AUDIT_ACTIONS } from "../../store/types/operator-reads.ts";
import { decodeCursor, keysetPage } from "../shared/keyset-cursor.ts";
import { OperatorRef } from "./get-work-item.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity, PageCursor, pageLimit } from "./schemas.ts";

const DEFAULT_LIMIT = 50;
const NullableId = (description: string) => Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description });

export const AuditQuery = Type.Object({ limit: Type.Optional(pageLimit(DEFAULT_LIMIT, 500)), cursor: Type.Optional(PageCursor) });
type AuditQuery = Static<typeof AuditQuery>;

export const AuditEntry = Type.Object(
  {
    auditId: Type.Integer({ minimum: 1 }),
    at: Type.String({ format: "date-time" }),
    operator: OperatorRef,
    action: Type.Union(
      AUDIT_ACTIONS.map((action) => Type.Literal(action)),
      { description: "what the operator did" },
    ),
    target: Type.Object(
      {
        companyId: NullableId("the company acted on"),
        workItemId: NullableId("the item acted on"),
        workType: Type.Union([Type.String(), Type.Null()], { description: "the work type paused or resumed" }),
        deliveryId: NullableId("the delivery redelivered"),
      },
      { description: "what the action was on; fields that do not apply are null" },
    ),
    reason: Type.String({ description: "why, as the operator gave it; empty for a sign-in" }),
    signIn: Type.Union(
      [
        Type.Object({ method: Type.Literal("password") }),
        Type.Object({ method: Type.Literal("oidc"), issuer: Type.String(), subject: Type.String({ description: "the operator's id at the identity provider" }) }),
        Type.Null(),
      ],
      { description: "how an operator.signin happened; null on every other action" },
    ),
    items: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "how many work items a company.erased took; null on every other action" }),
  },
  { title: "AuditEntry", description: "one operator action" },
);

export const AuditPage = Type.Object(
  { entries: Type.Array(AuditEntry), nextCursor: Type.Union([Type.String(), Type.Null()], { description: "pass as cursor to get the next page; null on the last page" }) },
  {
    title: "AuditPage",
    description: "one page of the audit log, newest first",
    examples: [
      {
        entries: [
          {
            auditId: 12,
            at: "2026-11-23T10:15:00.000Z",
            operator: { operatorId: "op_5b0f0e4c6a7d4e2f9c1b3a5d7e9f1a2b", email: "ops@example.com" },
            action: "workitem.retry",
            target: { companyId: 42, workItemId: 4711, workType: null, deliveryId: null },
            reason: "authority outage on 23 Nov, resubmitting",
            signIn: null,
            items: null,
          },
        ],
        nextCursor: null,
      },
    ],
  },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: AuditQuery }>("/api/Operator/Audit", {
    schema: {
      summary: "Read the audit log of operator actions, newest first, with a keyset cursor",
      operationId: "OperatorListAudit",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      querystring: AuditQuery,
      response: { 200: AuditPage, ...operatorResponses(400) },
    },
    handler: async (request) => {
      const { limit = DEFAULT_LIMIT, cursor } = request.query;
      const entries = await ctx.store.listAudit({ beforeAuditId: cursor === undefined ? undefined : decodeCursor(cursor), limit: limit + 1 });
      const page = keysetPage(entries, limit, (entry) => entry.auditId);
      return { entries: page.rows, nextCursor: page.nextCursor };
    },
  });
}
