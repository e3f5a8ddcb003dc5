/**
 * POST /api/AuthorityRvdm/AddWorkItem<Kind>, a route for each kind of follow-up (SPEC §15): a
 * change or the withdrawal of a create item's document, applied to it at once while it is not
 * sent, otherwise filed by the bot after it. What a kind's route validates and what it stores is
 * its entry in FOLLOW_UP_ROUTES, keyed by kind, so a new kind is a compile error here until it has
 * one. The rest is shared: the fields every follow-up carries, and the path from a validated body
 * to the store and back, with the same webhook guard, Idempotency-Key and answers as
 * AddWorkItemCreate.
 */
import { Type, type Static, type TObject, type TProperties } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { deadlineFor, toUtcIso } from "../../domain/deadline.ts";
import { BatchKey, WORK_TYPE_AUTHORITY_RVDM } from "../../domain/views.ts";
import { FOLLOW_UP_KINDS, FOLLOW_UP_RULES, type FollowUpKind } from "../../domain/work-item-kinds.ts";
import { ApiError } from "../../errors.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import type { AddFollowUpOutcome, NewFollowUp } from "../../store/store.ts";
import { requestTraceParent } from "../../telemetry/request-span.ts";
import { PositiveId } from "../shared/ids.ts";
import { hashBody, holdingIdempotencyKey, IdempotencyHeaders, idempotencyRecord, IdempotencyReplayedHeader, keyReused } from "../shared/idempotency.ts";
import { ExtraTranslationObject } from "../shared/translation-object.ts";
import { AuthorityRvdmWorkItemCreate, webhookTargetErrors } from "./add-work-item-create.ts";
import { workItemNotFound } from "./get-work-item.ts";

/** The fields of a change or withdrawal besides what it changes: its original and the create's own references. */
const followUpFields = {
  originalWorkItemId: PositiveId("the create item whose document this changes or withdraws"),
  customerReference: AuthorityRvdmWorkItemCreate.properties.customerReference,
  documentReference: AuthorityRvdmWorkItemCreate.properties.documentReference,
  webhookUrl: AuthorityRvdmWorkItemCreate.properties.webhookUrl,
} satisfies TProperties;

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

type FollowUpBody = { originalWorkItemId: number; customerReference: string; documentReference?: string; webhookUrl?: string };

/** A kind's route: its body, and what of a valid one is stored. */
interface FollowUpRoute<Body extends TObject> {
  body: Body;
  summary: string;
  /** The request as stored, hashed for its Idempotency-Key and filed; and what the store needs of it besides. */
  stored(body: Static<Body>, ctx: AppContext): { request: FollowUpBody } & Pick<NewFollowUp, "changes" | "movedDeadlineAt">;
}

const route = <Body extends TObject>(each: FollowUpRoute<Body>) => each;

const FOLLOW_UP_ROUTES = {
  change: route({
    body: AuthorityRvdmWorkItemChange,
    summary: "Change the document of a create work item: applied at once before it is filed, filed by the bot after",
    stored(body, ctx) {
      const { exportDate } = body.changes;
      // Stored as AddWorkItemCreate stores it: the UTC instant, one text per instant.
      const changes = exportDate === undefined ? body.changes : { ...body.changes, exportDate: toUtcIso(exportDate) };
      return { request: { ...body, changes }, changes, movedDeadlineAt: changes.exportDate === undefined ? null : deadlineFor(changes.exportDate, ctx.config.deadline) };
    },
  }),
  withdraw: route({
    body: AuthorityRvdmWorkItemWithdraw,
    summary: "Withdraw the document of a create work item: cancels it before it is filed, filed by the bot after",
    stored: (body) => ({ request: body }),
  }),
} satisfies Record<FollowUpKind, FollowUpRoute<TObject>>;

/** The body of each kind's route, for the SDK. */
export type AuthorityRvdmFollowUps = { [K in FollowUpKind]: Static<(typeof FOLLOW_UP_ROUTES)[K]["body"]> };

/** The 200: the batch key, and the header that says it is the first answer again. */
const FollowUpAddedResponse = {
  description: "where the change or withdraw item landed",
  headers: IdempotencyReplayedHeader,
  content: { "application/json": { schema: BatchKey, example: { workBatchId: 18, workItemId: 4712 } } },
};

export function register(app: FastifyInstance, ctx: AppContext): void {
  for (const kind of FOLLOW_UP_KINDS) {
    const { body, summary, stored }: FollowUpRoute<TObject> = FOLLOW_UP_ROUTES[kind];
    const operationId = `AddWorkItem${kind[0]!.toUpperCase()}${kind.slice(1)}`;
    const canonicalize = createCanonicalizer(body);
    app.post<{ Body: FollowUpBody; Headers: IdempotencyHeaders }>(`/api/AuthorityRvdm/${operationId}`, {
      schema: {
        summary,
        operationId,
        tags: ["AuthorityRvdm"],
        security: [{ bearer: [] }],
        headers: IdempotencyHeaders,
        body,
        response: { 200: FollowUpAddedResponse, ...guardedResponses(400, 404, 409, 413, 415, 422) },
      },
      preValidation: async (request) => {
        request.body = canonicalize(request.body) as FollowUpBody;
      },
      handler: async (request, reply) => {
        const { request: storedBody, ...details } = stored(request.body, ctx);
        return addFollowUp(ctx, request, reply, storedBody, { kind, ...details });
      },
    });
  }
}

/** Stores the change or withdrawal and answers as an add does; every refusal as a problem. */
async function addFollowUp(
  ctx: AppContext,
  request: FastifyRequest & { tenant: { companyId: number }; headers: { "idempotency-key"?: string } },
  reply: FastifyReply,
  body: FollowUpBody,
  details: Pick<NewFollowUp, "kind" | "changes" | "movedDeadlineAt">,
): Promise<BatchKey> {
  const { companyId } = request.tenant;
  if (body.webhookUrl !== undefined) {
    const errors = await webhookTargetErrors(body.webhookUrl, ctx);
    if (errors) throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors });
  }
  const key = request.headers["idempotency-key"];
  return holdingIdempotencyKey(ctx, companyId, key, async () => {
    const outcome = await ctx.store.addFollowUp({
      companyId,
      workType: WORK_TYPE_AUTHORITY_RVDM,
      batchMaxItems: ctx.config.batchMaxItems,
      originalWorkItemId: body.originalWorkItemId,
      customerReference: body.customerReference,
      documentReference: body.documentReference ?? null,
      webhookUrl: body.webhookUrl ?? null,
      request: body,
      changeCutoffMs: ctx.config.changeCutoffMs,
      now: new Date().toISOString(),
      traceParent: requestTraceParent(request),
      ...details,
      ...(key === undefined ? {} : { idempotency: idempotencyRecord(key, hashBody(body)) }),
    });
    if (outcome.kind !== "created" && outcome.kind !== "replayed") throw refusal(outcome, body.originalWorkItemId, details.kind);
    if (outcome.kind === "replayed") reply.header("idempotency-replayed", "true");
    else ctx.metrics.workItemsCreated.inc({ work_type: WORK_TYPE_AUTHORITY_RVDM });
    return outcome.key;
  });
}

function refusal(outcome: Exclude<AddFollowUpOutcome, { kind: "created" | "replayed" }>, originalId: number, kind: NewFollowUp["kind"]): ApiError {
  const what = FOLLOW_UP_RULES[kind].done;
  switch (outcome.kind) {
    case "keyReused":
      return keyReused();
    case "originalNotFound":
      return workItemNotFound(originalId);
    case "notAnOriginal":
      return new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", {
        errors: { originalWorkItemId: [`names a ${outcome.originalKind} item; only a create item's document can be ${what}`] },
      });
    case "refused": {
      const why = {
        ORIGINAL_CLOSED: `work item ${originalId} is ${outcome.originalStatus}`,
        WITHDRAWAL_PENDING: `work item ${originalId} has a withdrawal that has not failed`,
        CHANGE_CUTOFF_PASSED: `the transport of work item ${originalId} is less than the change cutoff away (CHANGE_CUTOFF_HOURS before its exportDate, or before the new one)`,
      }[outcome.code];
      return new ApiError("STATE_CONFLICT", `The document cannot be ${what}: ${why}.`, { reason: outcome.code });
    }
  }
}
