/**
 * Glossary
 * - Company (tenant): an integrator's organisation. Every row belongs to one; every query is
 *   scoped by `company_id`, taken from the `CompanyId` claim of the caller's token.
 * - API key: a long-lived credential pair (`apiKey` + secret) of one company, exchanged for a
 *   20-minute JWT. The secret is stored only as a hash.
 * - Work type: the kind of registration work, e.g. `AuthorityRvdm` (animal-manure transport
 *   documents filed with the Authority).
 * - Work item: one unit of registration work submitted by an integrator.
 * - Work batch: the container the bot picks up. A company has at most one `Open` batch per work
 *   type; new items are appended to it until it is full or the bot closes it.
 * - Bot: the scheduled worker that closes batches, files their items with the Authority through
 *   the authority adapter, and records each outcome.
 * - Translation object: `{ sendValue, documentValue? }`; the value sent to the Authority and,
 *   optionally, the text printed on the document.
 *
 * These TypeBox schemas are the single source of the wire shapes: the routes validate and
 * serialise with them, the OpenAPI document is generated from them, and the SDK derives its
 * types from them.
 */
import { Type, type Static, type TNull, type TSchema, type TUnion, type TUnsafe } from "@sinclair/typebox";
import { ITEM_ERROR_CODES, type ItemErrorCode } from "./item-errors.ts";
import { WORK_ITEM_KINDS } from "./work-item-kinds.ts";

export const WORK_TYPE_AUTHORITY_RVDM = "AuthorityRvdm";
/** Every work type the bot files; VlmMad has only its Ping so far. */
export const WORK_TYPES = [WORK_TYPE_AUTHORITY_RVDM] as const;

/**
 * `T | null`. A schema of one JSON type becomes a type list, `["string", "null"]`, which
 * Fastify's serializer tells apart with typeof; as an anyOf it would run an Ajv validator per
 * value on every response (a WorkItems page serialized 27% faster, docs/performance.md). A named
 * schema (a title: an OpenAPI component) and a union of literals stay an anyOf, so the document
 * still refers to the component.
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> | TUnion<[T, TNull]> =>
  typeof schema.type === "string" && schema.title === undefined
    ? Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, "null"] })
    : Type.Union([schema, Type.Null()]);
const Timestamp = (description: string) => Type.String({ format: "date-time", description, examples: ["2026-11-21T14:03:12.000Z"] });

export const WorkItemStatus = Type.Union(
  [
    Type.Literal("New"),
    Type.Literal("InProgress"),
    Type.Literal("Submitted"),
    Type.Literal("Successful"),
    Type.Literal("Failed"),
    Type.Literal("Cancelled"),
    Type.Literal("Withdrawn"),
  ],
  {
    description:
      "New → InProgress → Submitted (filed, the Authority's decision pending) → Successful | Failed; New → Cancelled; a create item Submitted | Successful → Withdrawn (SPEC §15)",
    examples: ["New"],
  },
);
export type WorkItemStatus = Static<typeof WorkItemStatus>;

export const WorkItemKind = Type.Union(WORK_ITEM_KINDS.map((kind) => Type.Literal(kind)), {
  description: "create: a new document; change or withdraw: of the document its originalWorkItemId filed (SPEC §15)",
  examples: ["create"],
});
export type WorkItemKind = Static<typeof WorkItemKind>;

export const WorkBatchStatus = Type.Union(
  [Type.Literal("Open"), Type.Literal("Closed"), Type.Literal("Processing"), Type.Literal("Completed")],
  { description: "Open → Closed → Processing → Completed", examples: ["Open"] },
);
export type WorkBatchStatus = Static<typeof WorkBatchStatus>;

export const BatchKey = Type.Object(
  {
    workBatchId: Type.Integer({ minimum: 1, description: "the batch the item landed in", examples: [17] }),
    workItemId: Type.Integer({ minimum: 1, description: "the item", examples: [4711] }),
  },
  { title: "WorkItemBatchKey", description: "where the item landed", examples: [{ workBatchId: 17, workItemId: 4711 }] },
);
export type BatchKey = Static<typeof BatchKey>;

export const FieldReason = Type.Object({
  field: Type.String({ examples: ["senderChamberOfCommerceNo"] }),
  message: Type.String({ examples: ["must be 8 digits"] }),
});

export const WorkItemResult = Type.Object(
  {
    registrationNumber: Type.String({ examples: ["RVDM-2026-000123"] }),
    registeredAt: Timestamp("when the Authority registered the item"),
  },
  { title: "WorkItemResult" },
);
export type WorkItemResult = Static<typeof WorkItemResult>;

export const DocumentChangeResult = Type.Object(
  {
    appliedBeforeFiling: Type.Optional(Type.Literal(true, { description: "applied to the original before it was filed, without a call to the Authority" })),
    revision: Type.Optional(Type.Integer({ minimum: 1, description: "a change: the original's revision once this change was applied", examples: [1] })),
  },
  { title: "DocumentChangeResult", description: "the outcome of a change or withdraw item that succeeded" },
);
export type DocumentChangeResult = Static<typeof DocumentChangeResult>;

export const WorkItemError = Type.Object(
  {
    code: Type.Unsafe<ItemErrorCode>({
      type: "string",
      enum: Object.keys(ITEM_ERROR_CODES),
      description: Object.entries(ITEM_ERROR_CODES)
        .map(([code, meaning]) => `${code}: ${meaning}`)
        .join("; "),
      examples: ["AUTHORITY_REJECTED"],
    }),
    message: Type.String({ examples: ["The Authority rejected the item."] }),
    details: Type.Array(FieldReason),
  },
  { title: "WorkItemError" },
);
export type WorkItemError = Static<typeof WorkItemError>;

export const AuthorityProgress = Type.Object(
  {
    applicationNumber: Nullable(Type.String({ description: "the Authority's number for the filed request", examples: ["RVDM-A-7Q2M9K4XWD"] })),
    registrationNumber: Nullable(Type.String({ description: "the registration, once the Authority accepted it", examples: ["RVDM-2026-4KX9QZ1M0P"] })),
    submittedAt: Nullable(Timestamp("when the Authority received the request")),
    decidedAt: Nullable(Timestamp("when the Authority's decision was learned")),
  },
  { title: "AuthorityProgress", description: "where the item stands at the Authority; each field null until known" },
);
export type AuthorityProgress = Static<typeof AuthorityProgress>;

/** Examples for the OpenAPI document: what the reference page shows as response bodies. */
const EXAMPLE_WORK_ITEM = {
  workItemId: 4711,
  workBatchId: 17,
  workType: WORK_TYPE_AUTHORITY_RVDM,
  status: "Successful",
  kind: "create",
  originalWorkItemId: null,
  revision: 0,
  customerReference: "ORDER-2026-0042",
  documentReference: "DOC-77",
  webhookUrl: "https://integrator.example/hooks/work-items",
  request: {
    customerReference: "ORDER-2026-0042",
    productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest" },
    destinationCountry: { sendValue: "DE" },
    exportDate: "2026-12-01T08:00:00Z",
    senderChamberOfCommerceNo: { sendValue: "12345678" },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
    plannedLoad: 31.5,
  },
  result: { registrationNumber: "RVDM-2026-4KX9QZ1M0P", registeredAt: "2026-11-21T14:04:02.000Z" },
  error: null,
  attempts: 0,
  authority: {
    applicationNumber: "RVDM-A-7Q2M9K4XWD",
    registrationNumber: "RVDM-2026-4KX9QZ1M0P",
    submittedAt: "2026-11-21T14:04:01.000Z",
    decidedAt: "2026-11-21T14:04:02.000Z",
  },
  deadlineAt: "2026-11-27T11:00:00.000Z",
  createdAt: "2026-11-21T14:03:12.000Z",
  updatedAt: "2026-11-21T14:04:02.000Z",
  completedAt: "2026-11-21T14:04:02.000Z",
};

export const WorkItemView = Type.Object(
  {
    workItemId: Type.Integer({ minimum: 1, examples: [4711] }),
    workBatchId: Type.Integer({ minimum: 1, examples: [17] }),
    workType: Type.String({ examples: [WORK_TYPE_AUTHORITY_RVDM] }),
    status: WorkItemStatus,
    kind: WorkItemKind,
    originalWorkItemId: Nullable(Type.Integer({ minimum: 1, description: "a change or withdraw item: the create item it changes; null for a create", examples: [4711] })),
    revision: Type.Optional(Type.Integer({ minimum: 0, description: "a create item: the changes applied to its document so far", examples: [0] })),
    customerReference: Type.String({ examples: ["ORDER-2026-0042"] }),
    documentReference: Nullable(Type.String()),
    webhookUrl: Nullable(Type.String()),
    request: Type.Record(Type.String(), Type.Unknown(), { description: "the submitted body, normalised; a create item's document as it stands, its changes applied" }),
    // null first: the serializer tries the branches in order, and most items have no result yet.
    result: Type.Union([Type.Null(), WorkItemResult, DocumentChangeResult]),
    error: Nullable(WorkItemError),
    attempts: Type.Integer({ minimum: 0, description: "transient failures so far", examples: [0] }),
    authority: AuthorityProgress,
    deadlineAt: Nullable(
      Timestamp("by when the Authority wants the request: working days before exportDate, before the cutoff (SPEC §10); null for items stored before deadlines were kept"),
    ),
    createdAt: Timestamp("when the item was accepted"),
    updatedAt: Timestamp("when the item last changed"),
    completedAt: Nullable(Timestamp("when the item reached a terminal status")),
  },
  { title: "WorkItemView", description: "one work item with its status and outcome", examples: [EXAMPLE_WORK_ITEM] },
);
export type WorkItemView = Static<typeof WorkItemView>;

export const WorkBatchCounts = Type.Object({
  new: Type.Integer({ minimum: 0 }),
  inProgress: Type.Integer({ minimum: 0 }),
  submitted: Type.Integer({ minimum: 0 }),
  successful: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0 }),
  cancelled: Type.Integer({ minimum: 0 }),
  withdrawn: Type.Integer({ minimum: 0 }),
});
export type WorkBatchCounts = Static<typeof WorkBatchCounts>;

export const WorkBatchView = Type.Object(
  {
    workBatchId: Type.Integer({ minimum: 1, examples: [17] }),
    workType: Type.String({ examples: [WORK_TYPE_AUTHORITY_RVDM] }),
    status: WorkBatchStatus,
    createdAt: Timestamp("when the batch opened"),
    closedAt: Nullable(Timestamp("when the batch stopped taking items")),
    completedAt: Nullable(Timestamp("when every item of the batch was terminal")),
    counts: WorkBatchCounts,
  },
  {
    title: "WorkBatchView",
    description: "one work batch with its item counts per status",
    examples: [
      {
        workBatchId: 17,
        workType: WORK_TYPE_AUTHORITY_RVDM,
        status: "Processing",
        createdAt: "2026-11-21T14:00:00.000Z",
        closedAt: "2026-11-21T14:04:00.000Z",
        completedAt: null,
        counts: { new: 0, inProgress: 1, submitted: 3, successful: 40, failed: 2, cancelled: 1, withdrawn: 0 },
      },
    ],
  },
);
export type WorkBatchView = Static<typeof WorkBatchView>;

export const WorkItemPage = Type.Object(
  {
    items: Type.Array(WorkItemView),
    nextCursor: Nullable(Type.String({ description: "pass as cursor to get the next page; null on the last page" })),
  },
  {
    title: "WorkItemPage",
    description: "one page of work items, newest first",
    examples: [{ items: [EXAMPLE_WORK_ITEM], nextCursor: "djE6NDcxMQ" }],
  },
);
export type WorkItemPage = Static<typeof WorkItemPage>;

/** A create item's registration, when it has one (a change or withdraw item's result is not one). */
export const registrationOf = (view: Pick<WorkItemView, "result">): WorkItemResult | null =>
  view.result !== null && "registrationNumber" in view.result ? view.result : null;

export const emptyCounts = (): WorkBatchCounts => ({ new: 0, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 0, withdrawn: 0 });

const countKeyByStatus: Record<WorkItemStatus, keyof WorkBatchCounts> = {
  New: "new",
  InProgress: "inProgress",
  Submitted: "submitted",
  Successful: "successful",
  Failed: "failed",
  Cancelled: "cancelled",
  Withdrawn: "withdrawn",
};
export const countKeyFor = (status: WorkItemStatus) => countKeyByStatus[status];
