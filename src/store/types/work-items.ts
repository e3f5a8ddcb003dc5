/** The store's work items as integrators add and read them: adds, single and bulk, gets, lists and cancel. A change or withdrawal is follow-ups.ts. */
import type { BatchKey, WorkBatchStatus, WorkBatchView, WorkItemKind, WorkItemStatus, WorkItemView } from "../../domain/views.ts";

/** One work item as intake stores it: what a single add and each item of a bulk add carry. */
export interface WorkItemFields {
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  /** The normalised request body, stored as given back in the work item view. */
  request: Record<string, unknown>;
  /** By when the Authority wants it (SPEC §10), worked out from exportDate by the API; none when absent. */
  deadlineAt?: string | null;
  /**
   * The W3C trace context of its intake (SPEC §17: one trace per item), the parent of the bot's
   * calls and the webhook deliveries about it; none when tracing is off. A bulk add's items share one.
   */
  traceParent?: string | null;
}

export interface IdempotencyRecord {
  key: string;
  requestHash: string;
  retentionSeconds: number;
}

export interface NewWorkItem extends WorkItemFields {
  companyId: number;
  workType: string;
  /** Items per batch before the open one is closed and a new one opens. */
  batchMaxItems: number;
  idempotency?: IdempotencyRecord;
}

export type AddWorkItemOutcome =
  | { kind: "created"; key: BatchKey }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; key: BatchKey }
  /** Same idempotency key with a different body. */
  | { kind: "keyReused" };

/** An item of a bulk add that the API refused before the store: its index in the request and why. */
export interface ItemRefusal {
  index: number;
  errors: Record<string, string[]>;
}

/**
 * Many items of one company and work type at once (SPEC §11.1, bulk add). The items are stored
 * in one transaction, in order, each as `addWorkItem` would store it (the same batch rules,
 * rollover included, so they may span batches), or none of them is.
 */
export interface NewWorkItems {
  companyId: number;
  workType: string;
  batchMaxItems: number;
  /** The items to store, in request order; may be empty when only the answer is to be kept. */
  items: WorkItemFields[];
  /**
   * The key names the whole request. Its record keeps the whole first answer: the keys of the
   * stored items and the `refused` items, so a replay gives back exactly that answer.
   */
  idempotency?: IdempotencyRecord & { refused: ItemRefusal[] };
}

export type AddWorkItemsOutcome =
  /** `keys[i]` is where `items[i]` landed. */
  | { kind: "created"; keys: BatchKey[] }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; keys: BatchKey[]; refused: ItemRefusal[] }
  /** Same idempotency key with a different body (or first used by a single add). */
  | { kind: "keyReused" };


export interface ListWorkItemsQuery {
  status?: WorkItemStatus;
  kind?: WorkItemKind;
  originalWorkItemId?: number;
  customerReference?: string;
  workBatchId?: number;
  /** Only items whose filing deadline is before this instant (ISO 8601, UTC). */
  deadlineBefore?: string;
  /** Keyset: only items with a smaller id (newest first). */
  beforeWorkItemId?: number;
  limit: number;
}

export type CancelOutcome =
  | { kind: "cancelled"; item: WorkItemView }
  /** The item exists but is not New, or its batch is no longer Open. */
  | { kind: "conflict"; item: WorkItemView; batchStatus: WorkBatchStatus }
  | { kind: "notFound" };

/** Intake and reads (API). */
export interface WorkItemsStore {
  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome>;
  /**
   * A bulk add (see NewWorkItems): through the same intake path as `addWorkItem` (the SQLite
   * writer thread's group commit, PostgreSQL's group-commit channels), one transaction for all the
   * items. An idempotency key is shared with `addWorkItem`: a key first used by the other kind
   * of add is `keyReused`.
   */
  addWorkItems(input: NewWorkItems): Promise<AddWorkItemsOutcome>;
  getWorkItem(companyId: number, workItemId: number): Promise<WorkItemView | undefined>;
  getWorkBatch(companyId: number, workBatchId: number): Promise<WorkBatchView | undefined>;
  listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]>;
  /**
   * getWorkItem's and listWorkItems's views as JSON text, made by the database
   * (core/item-json.ts): for the integrator's read routes, which answer the text as it is.
   */
  getWorkItemJson(companyId: number, workItemId: number): Promise<string | undefined>;
  listWorkItemsJson(companyId: number, query: ListWorkItemsQuery): Promise<Array<{ workItemId: number; json: string }>>;

  /**
   * New → Cancelled, only while the item is New and its batch Open, atomically against the bot
   * closing the batch (PostgreSQL: lock the batch row FOR SHARE before updating the item).
   * Sets updated_at and completed_at. An id of another company is `notFound`.
   */
  cancelWorkItem(companyId: number, workItemId: number, now: string): Promise<CancelOutcome>;

  /** Up to `limit` companies holding idempotency keys created at or before `createdBefore` (sweep step 1). */
  companiesWithExpiredIdempotencyKeys(input: { createdBefore: string; limit: number }): Promise<number[]>;
  /** Deletes up to `limit` of the company's idempotency keys created at or before `createdBefore`; resolves to how many. */
  deleteExpiredIdempotencyKeys(input: { companyId: number; createdBefore: string; limit: number }): Promise<number>;
}
