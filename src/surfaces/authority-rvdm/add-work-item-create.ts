/**
 * POST /api/AuthorityRvdm/AddWorkItemCreate: append one Authority RVDM "create" work item to the
 * company's Open batch (SPEC §4), optionally idempotent through the Idempotency-Key header.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { BatchKey, WORK_TYPE_AUTHORITY_RVDM } from "../../domain/views.ts";
import { ApiError, type FieldErrors } from "../../errors.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import type { WorkItemFields } from "../../store/store.ts";
import { checkWebhookTarget } from "../../webhooks/address-guard.ts";
import { hashBody, holdingIdempotencyKey, IdempotencyHeaders, IdempotencyReplayedHeader, idempotencyRecord, keyReused } from "../shared/idempotency.ts";
import { BooleanTranslationObject, ExtraTranslationObject, TranslationObject } from "../shared/translation-object.ts";
import { deadlineFor, toUtcIso } from "../../domain/deadline.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import { requestTraceParent } from "../../telemetry/request-span.ts";

export const AuthorityRvdmWorkItemCreate = Type.Object(
  {
    customerReference: Type.String({ minLength: 1, maxLength: 100, description: "your reference for this item", examples: ["ORDER-2026-0042"] }),
    documentReference: Type.Optional(Type.String({ maxLength: 100, examples: ["DOC-77"] })),
    webhookUrl: Type.Optional(
      Type.String({
        format: "uri",
        maxLength: 2000,
        pattern: "^[Hh][Tt][Tt][Pp][Ss]?://",
        errorMessage: "must be an absolute http or https URL",
        description: "receives a signed event when the item succeeds or fails",
        examples: ["https://integrator.example/hooks/work-items"],
      }),
    ),
    productName: TranslationObject,
    destinationCountry: TranslationObject,
    destinationRegion: Type.Optional(TranslationObject),
    exportDate: Type.String({ format: "date-time", description: "ISO 8601 date-time (UTC when no offset is given)", examples: ["2026-12-01T08:00:00Z"] }),
    senderChamberOfCommerceNo: TranslationObject,
    senderDomestic: Type.Optional(BooleanTranslationObject),
    receiverChamberOfCommerceNo: TranslationObject,
    receiverDomestic: Type.Optional(BooleanTranslationObject),
    requestNo: Type.Optional(TranslationObject),
    plannedLoad: Type.Number({ minimum: 0, description: "planned load; a JSON string holding a number is accepted too", examples: [31.5] }),
    certificateLanguage: Type.Optional(TranslationObject),
    certificateType: Type.Optional(TranslationObject),
  },
  {
    additionalProperties: ExtraTranslationObject,
    title: "AuthorityRvdmWorkItemCreate",
    examples: [
      {
        customerReference: "ORDER-2026-0042",
        documentReference: "DOC-77",
        webhookUrl: "https://integrator.example/hooks/work-items",
        productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest" },
        destinationCountry: { sendValue: "DE", documentValue: "Duitsland" },
        destinationRegion: { sendValue: "NW" },
        exportDate: "2026-12-01T08:00:00Z",
        senderChamberOfCommerceNo: { sendValue: "12345678" },
        senderDomestic: { sendValue: "true" },
        receiverChamberOfCommerceNo: { sendValue: "87654321" },
        receiverDomestic: { sendValue: "false" },
        requestNo: { sendValue: "REQ-1" },
        plannedLoad: 31.5,
        certificateLanguage: { sendValue: "NL" },
        certificateType: { sendValue: "EXPORT" },
      },
    ],
  },
);
export type AuthorityRvdmWorkItemCreate = Static<typeof AuthorityRvdmWorkItemCreate>;

const canonicalize = createCanonicalizer(AuthorityRvdmWorkItemCreate);

/** The 200: the batch key, and the header that says it is the first answer again. */
const AddedResponse = {
  description: "where the item landed",
  headers: IdempotencyReplayedHeader,
  content: { "application/json": { schema: BatchKey, example: { workBatchId: 17, workItemId: 4711 } } },
};

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: AuthorityRvdmWorkItemCreate; Headers: IdempotencyHeaders }>("/api/AuthorityRvdm/AddWorkItemCreate", {
    schema: {
      summary: "Add one Authority RVDM create work item to the company's open batch",
      operationId: "AddWorkItemCreate",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      headers: IdempotencyHeaders,
      body: AuthorityRvdmWorkItemCreate,
      response: { 200: AddedResponse, ...guardedResponses(400, 409, 413, 415, 422) },
    },
    preValidation: async (request) => {
      request.body = canonicalize(request.body) as AuthorityRvdmWorkItemCreate;
    },
    handler: async (request, reply) => {
      const { companyId } = request.tenant;
      const body = normalizeWorkItem(request.body);
      if (body.webhookUrl !== undefined) {
        const errors = await webhookTargetErrors(body.webhookUrl, ctx);
        if (errors) throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors });
      }
      const key = request.headers["idempotency-key"];
      return holdingIdempotencyKey(ctx, companyId, key, async () => {
        const outcome = await ctx.store.addWorkItem({
          companyId,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          batchMaxItems: ctx.config.batchMaxItems,
          ...workItemFields(body, ctx),
          traceParent: requestTraceParent(request),
          ...(key === undefined ? {} : { idempotency: idempotencyRecord(key, hashBody(body)) }),
        });
        if (outcome.kind === "keyReused") throw keyReused();
        if (outcome.kind === "replayed") reply.header("idempotency-replayed", "true");
        else ctx.metrics.workItemsCreated.inc({ work_type: WORK_TYPE_AUTHORITY_RVDM });
        return outcome.key;
      });
    },
  });
}

/**
 * The body as it is stored (SPEC §11.5): exportDate as the UTC instant with Z, so "08:00:00",
 * "08:00:00Z" and "10:00:00+02:00" are one instant, one text, one idempotency hash.
 */
export function normalizeWorkItem(body: AuthorityRvdmWorkItemCreate): AuthorityRvdmWorkItemCreate {
  return { ...body, exportDate: toUtcIso(body.exportDate) };
}

/** A valid, normalised body as the store keeps it, with its filing deadline (SPEC §10). */
export function workItemFields(body: AuthorityRvdmWorkItemCreate, ctx: AppContext): WorkItemFields {
  return {
    customerReference: body.customerReference,
    documentReference: body.documentReference ?? null,
    webhookUrl: body.webhookUrl ?? null,
    request: body,
    deadlineAt: deadlineFor(body.exportDate, ctx.config.deadline),
  };
}

/**
 * SSRF guard at intake (SPEC §6), failing closed: a webhook target that is, or resolves to, a
 * non-public address, or whose host does not exist, is a 400 on `webhookUrl`; a lookup that
 * times out is a 503 to retry, never an item accepted unchecked. The dispatcher checks again
 * before every delivery.
 */
export async function webhookTargetErrors(url: string, ctx: AppContext): Promise<FieldErrors | undefined> {
  const verdict = await checkWebhookTarget(url, { allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks, ...(ctx.webhookLookup ? { lookup: ctx.webhookLookup } : {}) });
  if (verdict.kind === "allowed") return undefined;
  if (verdict.kind === "unresolved" && verdict.retryable) {
    throw new ApiError("LOOKUP_UNAVAILABLE", `The webhookUrl host could not be looked up just now (${verdict.reason}); retry shortly.`, { headers: { "retry-after": "2" } });
  }
  return { webhookUrl: [verdict.reason] };
}
