/**
 * POST /api/AuthorityRvdm/AddWorkItemWithdraw: the withdrawal of a create item's document (SPEC
 * §15): it cancels the original while that is not sent, otherwise the bot files it after it.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { IdempotencyHeaders } from "../shared/idempotency.ts";
import { addFollowUp, followUpFields, FollowUpAddedResponse } from "./follow-up.ts";

export const AuthorityRvdmWorkItemWithdraw = Type.Object(
  {
    ...followUpFields,
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description: "why the document is withdrawn, as the Authority is told",
      examples: ["The transport was called off."],
    }),
  },
  {
    additionalProperties: false,
    title: "AuthorityRvdmWorkItemWithdraw",
    examples: [{ originalWorkItemId: 4711, customerReference: "ORDER-2026-0042-W", reason: "The transport was called off." }],
  },
);
export type AuthorityRvdmWorkItemWithdraw = Static<typeof AuthorityRvdmWorkItemWithdraw>;

const canonicalize = createCanonicalizer(AuthorityRvdmWorkItemWithdraw);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: AuthorityRvdmWorkItemWithdraw; Headers: IdempotencyHeaders }>("/api/AuthorityRvdm/AddWorkItemWithdraw", {
    schema: {
      summary: "Withdraw the document of a create work item: cancels it before it is filed, filed by the bot after",
      operationId: "AddWorkItemWithdraw",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      headers: IdempotencyHeaders,
      body: AuthorityRvdmWorkItemWithdraw,
      response: { 200: FollowUpAddedResponse, ...guardedResponses(400, 404, 409, 413, 415, 422) },
    },
    preValidation: async (request) => {
      request.body = canonicalize(request.body) as AuthorityRvdmWorkItemWithdraw;
    },
    handler: async (request, reply) => addFollowUp(ctx, request, reply, request.body, { kind: "withdraw" }),
  });
}
