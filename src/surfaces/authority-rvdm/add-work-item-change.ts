/**
 * POST /api/AuthorityRvdm/AddWorkItemChange: a change of a create item's document (SPEC §15),
 * applied at once while the original is not sent, otherwise filed by the bot after it.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { deadlineFor, toUtcIso } from "../../domain/deadline.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { IdempotencyHeaders } from "../shared/idempotency.ts";
import { ExtraTranslationObject } from "../shared/translation-object.ts";
import { AuthorityRvdmWorkItemCreate } from "./add-work-item-create.ts";
import { addFollowUp, followUpFields, FollowUpAddedResponse } from "./follow-up.ts";

/**
 * The create's references and webhook are the integrator's own, not the document's: a change may
 * not name them (SPEC §15, §20), in any shape, null included, nor as an extra translation object
 * in another letter case (the canonicaliser binds names case-insensitively, so it is refused too).
 */
const NOT_CHANGEABLE = ["customerReference", "documentReference", "webhookUrl"] as const;
const NotChangeable = Type.Optional(Type.Never({ errorMessage: "cannot be changed; it belongs to the work item, not to its document" }));

/** Any declaration field of a create, each by its own rule; not the create's references or webhook. */
const DeclarationChanges = Type.Object(
  {
    ...Type.Partial(Type.Omit(AuthorityRvdmWorkItemCreate, NOT_CHANGEABLE)).properties,
    ...Object.fromEntries(NOT_CHANGEABLE.map((name) => [name, NotChangeable])),
  },
  {
  title: "AuthorityRvdmDeclarationChanges",
  examples: [{ exportDate: "2026-12-02T08:00:00Z", plannedLoad: 28 }],
  additionalProperties: ExtraTranslationObject,
  minProperties: 1,
  errorMessage: { minProperties: "must change at least one field" },
  description: "the declaration fields to change, each checked as AddWorkItemCreate checks it; extra translation objects included",
  },
);

export const AuthorityRvdmWorkItemChange = Type.Object(
  { ...followUpFields, changes: DeclarationChanges },
  {
    additionalProperties: false,
    title: "AuthorityRvdmWorkItemChange",
    examples: [{ originalWorkItemId: 4711, customerReference: "ORDER-2026-0042-C1", changes: { exportDate: "2026-12-02T08:00:00Z", plannedLoad: 28 } }],
  },
);
export type AuthorityRvdmWorkItemChange = Static<typeof AuthorityRvdmWorkItemChange>;

const canonicalize = createCanonicalizer(AuthorityRvdmWorkItemChange);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: AuthorityRvdmWorkItemChange; Headers: IdempotencyHeaders }>("/api/AuthorityRvdm/AddWorkItemChange", {
    schema: {
      summary: "Change the document of a create work item: applied at once before it is filed, filed by the bot after",
      operationId: "AddWorkItemChange",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      headers: IdempotencyHeaders,
      body: AuthorityRvdmWorkItemChange,
      response: { 200: FollowUpAddedResponse, ...guardedResponses(400, 404, 409, 413, 415, 422) },
    },
    preValidation: async (request) => {
      request.body = canonicalize(request.body) as AuthorityRvdmWorkItemChange;
    },
    handler: async (request, reply) => {
      const { exportDate } = request.body.changes;
      // Stored as AddWorkItemCreate stores it: the UTC instant, one text per instant.
      const changes = exportDate === undefined ? request.body.changes : { ...request.body.changes, exportDate: toUtcIso(exportDate) };
      const body = { ...request.body, changes };
      return addFollowUp(ctx, request, reply, body, {
        kind: "change",
        changes,
        movedDeadlineAt: changes.exportDate === undefined ? null : deadlineFor(changes.exportDate, ctx.config.deadline),
      });
    },
  });
}
