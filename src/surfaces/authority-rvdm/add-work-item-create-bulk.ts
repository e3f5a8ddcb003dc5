/**
 * POST /api/AuthorityRvdm/AddWorkItemCreateBulk: up to 1,000 Authority RVDM "create" work items
 * in one request (SPEC §11.1).
 *
 * Each item goes through what AddWorkItemCreate does to its body: the same compatibility rules
 * (case-insensitive names, numbers in strings), the same schema, the same normalisation and
 * webhook address check, and the same batch rules in the store, rollover included. The answer
 * lists one result per item in request order. The stored items of one request are committed
 * together, before the 200; with `allOrNothing`, one invalid item refuses the whole request.
 * An Idempotency-Key names the whole request. Each item counts as one request against the
 * company's rate limit.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../domain/views.ts";
import { ApiError, type FieldErrors } from "../../errors.ts";
import { createCanonicalizer } from "../../http/compat.ts";
import { holdsUnstorableText, unstorableText } from "../../http/storable-text.ts";
import { compileBodyValidator, createValidatorCompiler } from "../../http/validation.ts";
import type { BatchKey } from "../../domain/views.ts";
import { guardedResponses } from "../../http/problem-schema.ts";
import type { ItemRefusal, WorkItemFields } from "../../store/store.ts";
import { hashBody, holdingIdempotencyKey, IdempotencyHeaders, IdempotencyReplayedHeader, idempotencyRecord, keyReused } from "../shared/idempotency.ts";
import { AuthorityRvdmWorkItemCreate, normalizeWorkItem, webhookTargetErrors, workItemFields } from "./add-work-item-create.ts";
import { requestTraceParent } from "../../telemetry/request-span.ts";

export const MAX_BULK_ITEMS = 1000;

const [singleExample] = AuthorityRvdmWorkItemCreate.examples as Array<Static<typeof AuthorityRvdmWorkItemCreate>>;

export const AuthorityRvdmWorkItemCreateBulk = Type.Object(
  {
    items: Type.Array(AuthorityRvdmWorkItemCreate, {
      minItems: 1,
      maxItems: MAX_BULK_ITEMS,
      description: "1 to 1,000 work items, each exactly as the body of AddWorkItemCreate",
    }),
    allOrNothing: Type.Optional(
      Type.Boolean({ description: "true: one invalid item refuses the whole request (400, nothing stored); default false: the valid items are stored" }),
    ),
  },
  {
    additionalProperties: false,
    title: "AuthorityRvdmWorkItemCreateBulk",
    examples: [{ items: [singleExample, { ...singleExample, customerReference: "ORDER-2026-0043", plannedLoad: 12 }] }],
  },
);
export type AuthorityRvdmWorkItemCreateBulk = Static<typeof AuthorityRvdmWorkItemCreateBulk>;

/** What Fastify validates: the request as a whole; each item is then checked on its own. */
const BulkEnvelope = Type.Object(
  {
    items: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BULK_ITEMS }),
    allOrNothing: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type BulkEnvelope = Static<typeof BulkEnvelope>;

const Index = Type.Integer({ minimum: 0, description: "the item's position in `items`, from 0", examples: [0] });

export const WorkItemBulkAdded = Type.Object(
  {
    index: Index,
    workBatchId: Type.Integer({ minimum: 1, description: "the batch the item landed in", examples: [17] }),
    workItemId: Type.Integer({ minimum: 1, description: "the item", examples: [4711] }),
  },
  { title: "WorkItemBulkAdded", description: "an item that was stored, and where" },
);

export const WorkItemBulkRefused = Type.Object(
  {
    index: Index,
    status: Type.Literal(400, { description: "the status AddWorkItemCreate would have answered for this item alone" }),
    errors: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: "field path within the item -> messages; `$` names the item as a whole",
      examples: [{ plannedLoad: ["must be ≥ 0"] }],
    }),
  },
  { title: "WorkItemBulkRefused", description: "an item that was not stored, and why" },
);

export const WorkItemBulkResults = Type.Object(
  {
    results: Type.Array(Type.Union([WorkItemBulkAdded, WorkItemBulkRefused]), { description: "one result per item, in request order" }),
  },
  { title: "WorkItemBulkResults", description: "where each stored item landed, and why each other item was refused" },
);
export type WorkItemBulkResults = Static<typeof WorkItemBulkResults>;
type BulkResult = WorkItemBulkResults["results"][number];

const BulkAddedResponse = {
  description: "one result per item, in request order; every stored item is committed",
  headers: IdempotencyReplayedHeader,
  content: {
    "application/json": {
      schema: WorkItemBulkResults,
      example: {
        results: [
          { index: 0, workBatchId: 17, workItemId: 4711 },
          { index: 1, status: 400, errors: { plannedLoad: ["must be ≥ 0"] } },
        ],
      },
    },
  },
};

const canonicalize = createCanonicalizer(AuthorityRvdmWorkItemCreateBulk);

/** An item after the single add's checks: ready for the store, or refused with its field errors. */
type CheckedItem = { fields: WorkItemFields } | { errors: FieldErrors };

export function register(app: FastifyInstance, ctx: AppContext): void {
  const compile = createValidatorCompiler();
  const validateItem = compileBodyValidator(AuthorityRvdmWorkItemCreate);

  app.post<{ Body: BulkEnvelope; Headers: IdempotencyHeaders }>("/api/AuthorityRvdm/AddWorkItemCreateBulk", {
    schema: {
      summary: "Add up to 1,000 Authority RVDM create work items at once",
      description:
        "Each item is validated and stored exactly as AddWorkItemCreate would store it (batch rollover included: one request may span batches). " +
        "The 200 lists one result per item in request order. With `allOrNothing: true` an invalid item refuses the whole request with a 400 " +
        "whose errors are prefixed with the item (`items[3].plannedLoad`). Each item counts as one request against the company's rate limit; " +
        "a request larger than the burst is admitted only when the bucket is full, and the requests after it wait. Body limit: MAX_BULK_BODY_BYTES (4 MiB).",
      operationId: "AddWorkItemCreateBulk",
      tags: ["AuthorityRvdm"],
      security: [{ bearer: [] }],
      headers: IdempotencyHeaders,
      body: AuthorityRvdmWorkItemCreateBulk,
      response: { 200: BulkAddedResponse, ...guardedResponses(400, 409, 413, 415, 422) },
    },
    bodyLimit: ctx.config.maxBulkBodyBytes,
    // An item with text the stores can't hold is refused on its own, like any other invalid item (SPEC §24).
    config: { storableTextPerItem: "items" },
    // The document shows the items' schema; Fastify checks the envelope, and each item is checked on its own below.
    validatorCompiler: (route) => compile(route.httpPart === "body" ? { ...route, schema: BulkEnvelope } : route),
    preValidation: async (request) => {
      request.body = canonicalize(request.body) as BulkEnvelope;
      const items = (request.body as { items?: unknown } | null)?.items;
      const count = Array.isArray(items) && items.length <= MAX_BULK_ITEMS ? items.length : 1;
      const refusal = await ctx.rateLimits.tenant?.chargeMore(request.tenant.companyId, count);
      if (refusal) throw refusal;
    },
    handler: async (request, reply) => {
      const { companyId } = request.tenant;
      const { items, allOrNothing = false } = request.body;
      const checked = await checkItems(items, holdsUnstorableText(request) ? (item) => unstorableText(item) ?? validateItem(item) : validateItem, ctx);
      const refused: ItemRefusal[] = checked.flatMap((item, index) => ("errors" in item ? [{ index, errors: item.errors }] : []));
      if (allOrNothing && refused.length > 0) {
        throw new ApiError("VALIDATION_FAILED", `${refused.length} of ${items.length} items are invalid; with allOrNothing nothing was stored.`, {
          errors: prefixed(refused),
        });
      }
      const accepted = checked.flatMap((item) => ("fields" in item ? [item.fields] : []));
      const key = request.headers["idempotency-key"];
      const traceParent = requestTraceParent(request);
      if (key === undefined && accepted.length === 0) return { results: inRequestOrder([], refused) };
      return holdingIdempotencyKey(ctx, companyId, key, async () => {
        const outcome = await ctx.store.addWorkItems({
          companyId,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          batchMaxItems: ctx.config.batchMaxItems,
          items: accepted.map((fields) => ({ ...fields, traceParent })),
          ...(key === undefined ? {} : { idempotency: { ...idempotencyRecord(key, requestHash(allOrNothing, checked, items)), refused } }),
        });
        if (outcome.kind === "keyReused") throw keyReused();
        if (outcome.kind === "replayed") {
          reply.header("idempotency-replayed", "true");
          return { results: inRequestOrder(outcome.keys, outcome.refused) };
        }
        if (outcome.keys.length > 0) ctx.metrics.workItemsCreated.inc({ work_type: WORK_TYPE_AUTHORITY_RVDM }, outcome.keys.length);
        return { results: inRequestOrder(outcome.keys, refused) };
      });
    },
  });
}

/** Every item through the single add's checks; a webhook host is looked up once per request. */
async function checkItems(items: unknown[], validateItem: (value: unknown) => FieldErrors | undefined, ctx: AppContext): Promise<CheckedItem[]> {
  const targets = new Map<string, Promise<FieldErrors | undefined>>();
  return Promise.all(
    items.map(async (item): Promise<CheckedItem> => {
      const errors = validateItem(item);
      if (errors) return { errors };
      const body = normalizeWorkItem(item as AuthorityRvdmWorkItemCreate);
      if (body.webhookUrl !== undefined) {
        let target = targets.get(body.webhookUrl);
        if (!target) targets.set(body.webhookUrl, (target = webhookTargetErrors(body.webhookUrl, ctx)));
        const refused = await target;
        if (refused) return { errors: refused };
      }
      return { fields: workItemFields(body, ctx) };
    }),
  );
}

/**
 * What tells "the same request" from "another": every item as it would be stored (a refused one
 * as sent), and allOrNothing; named apart from a single add's hash, which shares the keys.
 */
function requestHash(allOrNothing: boolean, checked: CheckedItem[], items: unknown[]): string {
  return hashBody({ operation: "AddWorkItemCreateBulk", allOrNothing, items: checked.map((item, index) => ("fields" in item ? item.fields.request : items[index])) });
}

/** The stored items' keys and the refused items, merged back into request order. */
function inRequestOrder(keys: BatchKey[], refused: ItemRefusal[]): BulkResult[] {
  const refusedAt = new Map(refused.map((item) => [item.index, item.errors]));
  const results: BulkResult[] = [];
  let next = 0;
  for (let index = 0; index < keys.length + refused.length; index++) {
    const errors = refusedAt.get(index);
    if (errors) results.push({ index, status: 400, errors });
    else results.push({ index, ...keys[next++]! });
  }
  return results;
}

/** `allOrNothing`'s 400: each item's errors under `items[<index>].<field>` (`items[<index>]` for the item itself). */
function prefixed(refused: ItemRefusal[]): FieldErrors {
  const errors = new Map<string, string[]>();
  for (const { index, errors: itemErrors } of refused) {
    for (const [field, messages] of Object.entries(itemErrors)) errors.set(field === "$" ? `items[${index}]` : `items[${index}].${field}`, messages);
  }
  return Object.fromEntries(errors);
}
