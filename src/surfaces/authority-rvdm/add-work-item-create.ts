/**
 * POST /api/AuthorityRvdm/AddWorkItemCreate: append one Authority RVDM "create" work item to the
 * company's Open batch (SPEC §4), optionally idempotent through the Idempotency-Key header.
 */
import { createHash } from "node:crypto";
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { BatchKey, WORK_TYPE_AUTHORITY_RVDM } from "../../domain/views.ts";
import { ApiError } from "../../errors.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { checkWebhookTarget } from "../../webhooks/address-guard.ts";
import { guardedResponses } from "../shared/problem-schema.ts";
import { BooleanTranslationObject, ExtraTranslationObject, TranslationObject } from "../shared/translation-object.ts";
import { deadlineFor, toUtcIso } from "../../domain/deadline.ts";
import { IDEMPOTENCY_RETENTION_SECONDS } from "../../retention/idempotency-sweep.ts";


/** References are stored as text columns, which in PostgreSQL cannot hold U+0000 or a lone surrogate. */
const PLAIN_TEXT = { pattern: "^[^\\u0000\\uD800-\\uDFFF]*$", errorMessage: "must not contain U+0000 or unpaired surrogate characters" };

export const AuthorityRvdmWorkItemCreate = Type.Object(
  {
    customerReference: Type.String({ minLength: 1, maxLength: 100, ...PLAIN_TEXT, description: "your reference for this item", examples: ["ORDER-2026-0042"] }),
    documentReference: Type.Optional(Type.String({ maxLength: 100, ...PLAIN_TEXT, examples: ["DOC-77"] })),
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

const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "retry-safe submission: the same key and body within 24 h returns the first answer" }),
  ),
});

const canonicalize = createCanonicalizer(AuthorityRvdmWorkItemCreate);

/** The 200: the batch key, and the header that says it is the first answer again. */
const AddedResponse = {
  description: "where the item landed",
  headers: {
    "Idempotency-Replayed": {
      type: "string",
      enum: ["true"],
      description: "`true` when this is the first answer to an earlier request with the same Idempotency-Key and body; nothing new was stored",
    },
  },
  content: { "application/json": { schema: BatchKey, example: { workBatchId: 17, workItemId: 4711 } } },
};

export function register(app: FastifyInstance, ctx: AppContext): void {
  /** Keys whose first request is still being committed in this process. */
  const inFlight = new Set<string>();

  app.post<{ Body: AuthorityRvdmWorkItemCreate; Headers: Static<typeof IdempotencyHeaders> }>("/api/AuthorityRvdm/AddWorkItemCreate", {
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
      if (body.webhookUrl !== undefined) await assertPublicWebhookTarget(body.webhookUrl, ctx);
      const key = request.headers["idempotency-key"];
      const flightKey = key === undefined ? undefined : `${companyId}\u0000${key}`;
      if (flightKey !== undefined) {
        if (inFlight.has(flightKey)) {
          throw new ApiError("IDEMPOTENCY_IN_FLIGHT", "The first request with this Idempotency-Key has not finished; retry shortly.", {
            headers: { "retry-after": "1" },
          });
        }
        inFlight.add(flightKey);
      }
      try {
        const outcome = await ctx.store.addWorkItem({
          companyId,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          customerReference: body.customerReference,
          documentReference: body.documentReference ?? null,
          webhookUrl: body.webhookUrl ?? null,
          request: body,
          batchMaxItems: ctx.config.batchMaxItems,
          deadlineAt: deadlineFor(body.exportDate, ctx.config.deadline),
          ...(key === undefined ? {} : { idempotency: { key, requestHash: hashBody(body), retentionSeconds: IDEMPOTENCY_RETENTION_SECONDS } }),
        });
        if (outcome.kind === "keyReused") {
          throw new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was first used with a different body; use a new key for a new item.");
        }
        if (outcome.kind === "replayed") reply.header("idempotency-replayed", "true");
        else ctx.metrics.workItemsCreated.inc({ work_type: WORK_TYPE_AUTHORITY_RVDM });
        return outcome.key;
      } finally {
        if (flightKey !== undefined) inFlight.delete(flightKey);
      }
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

/**
 * SSRF guard at intake (SPEC §6): a webhook target that is, or resolves to, a non-public
 * address is a 400. A host name that does not resolve right now is accepted; the dispatcher
 * checks again, after resolving, before every delivery.
 */
async function assertPublicWebhookTarget(url: string, ctx: AppContext): Promise<void> {
  const verdict = await checkWebhookTarget(url, { allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks });
  if (verdict.kind === "refused") {
    throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors: { webhookUrl: [verdict.reason] } });
  }
}

/** SHA-256 of the body with keys sorted, so property order does not make a body "different". */
function hashBody(body: unknown): string {
  return createHash("sha256").update(stableJson(body)).digest("base64url");
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(",")}}`;
}
