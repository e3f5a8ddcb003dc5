/**
 * Row-to-domain mapping for both backends. Their columns carry the same names; the values
 * differ in type (PostgreSQL: bigint as text, timestamptz as Date, json parsed; SQLite: numbers
 * and text), and each mapper accepts both.
 */
import type { WorkBatchCounts, WorkBatchStatus, WorkBatchView, WorkItemKind, WorkItemStatus, WorkItemView } from "../domain/views.ts";
import { countKeyFor, emptyCounts } from "../domain/views.ts";
import { utcInstant } from "../domain/deadline.ts";
import type {
  ApiKeyRecord,
  Company,
  DueItem,
  ItemToPoll,
  OperatorWorkItemView,
  WebhookDelivery,
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEventType,
} from "./store.ts";

export type Timestamp = string | Date;
type Json = string | Record<string, unknown>;
type Id = number | string;

export const iso = (value: Timestamp): string => (value instanceof Date ? value.toISOString() : value);
export const isoOrNull = (value: Timestamp | null): string | null => (value === null ? null : iso(value));
const parsed = <T>(value: Json | null): T | null => (value === null ? null : ((typeof value === "string" ? JSON.parse(value) : value) as T));

/** The stored body; exportDate as the UTC instant with Z even in rows stored before intake normalised it. */
export function storedRequest(value: Json): Record<string, unknown> {
  const request = parsed<Record<string, unknown>>(value) ?? {};
  const exportDate = request.exportDate;
  if (typeof exportDate === "string" && !exportDate.endsWith("Z")) {
    const instant = utcInstant(exportDate);
    if (!Number.isNaN(instant)) request.exportDate = new Date(instant).toISOString();
  }
  return request;
}

export interface WorkItemRow {
  work_item_id: Id;
  company_id: Id;
  work_batch_id: Id;
  work_type: string;
  status: string;
  customer_reference: string;
  document_reference: string | null;
  webhook_url: string | null;
  request: Json;
  result: Json | null;
  error: Json | null;
  attempts: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
  application_number: string | null;
  registration_number: string | null;
  submitted_at: Timestamp | null;
  decided_at: Timestamp | null;
  deadline_at: Timestamp | null;
  kind: WorkItemKind;
  original_work_item_id: Id | null;
  revision: number;
}

export function toWorkItemView(row: WorkItemRow): WorkItemView {
  return {
    workItemId: Number(row.work_item_id),
    workBatchId: Number(row.work_batch_id),
    workType: row.work_type,
    status: row.status as WorkItemStatus,
    kind: row.kind,
    originalWorkItemId: row.original_work_item_id === null ? null : Number(row.original_work_item_id),
    ...(row.kind === "create" ? { revision: row.revision } : {}),
    customerReference: row.customer_reference,
    documentReference: row.document_reference,
    webhookUrl: row.webhook_url,
    request: storedRequest(row.request),
    result: parsed(row.result),
    error: parsed(row.error),
    attempts: row.attempts,
    authority: {
      applicationNumber: row.application_number,
      registrationNumber: row.registration_number,
      submittedAt: isoOrNull(row.submitted_at),
      decidedAt: isoOrNull(row.decided_at),
    },
    deadlineAt: isoOrNull(row.deadline_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    completedAt: isoOrNull(row.completed_at),
  };
}

/** An item as operators see it: the integrator's view plus its company. */
export const toOperatorWorkItemView = (row: WorkItemRow): OperatorWorkItemView => ({ ...toWorkItemView(row), companyId: Number(row.company_id) });

/** A batch with one of its item statuses and that status's count (status NULL: no items). */
export interface WorkBatchStatusRow {
  work_batch_id: Id;
  work_type: string;
  status: string;
  created_at: Timestamp;
  closed_at: Timestamp | null;
  completed_at: Timestamp | null;
  item_status: string | null;
  item_count: Id;
}

export function toWorkBatchView(rows: WorkBatchStatusRow[]): WorkBatchView | undefined {
  const row = rows[0];
  if (!row) return undefined;
  const counts: WorkBatchCounts = emptyCounts();
  for (const { item_status, item_count } of rows) {
    if (item_status !== null) counts[countKeyFor(item_status as WorkItemStatus)] = Number(item_count);
  }
  return {
    workBatchId: Number(row.work_batch_id),
    workType: row.work_type,
    status: row.status as WorkBatchStatus,
    createdAt: iso(row.created_at),
    closedAt: isoOrNull(row.closed_at),
    completedAt: isoOrNull(row.completed_at),
    counts,
  };
}

export interface ApiKeyRow {
  key_id: string;
  company_id: Id;
  name: string | null;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export const toApiKey = (row: ApiKeyRow): ApiKeyRecord => ({
  keyId: row.key_id,
  companyId: Number(row.company_id),
  name: row.name,
  createdAt: iso(row.created_at),
  revokedAt: isoOrNull(row.revoked_at),
});

export interface CompanyRow {
  company_id: Id;
  name: string;
  created_at: Timestamp;
}

export const toCompany = (row: CompanyRow): Company => ({ companyId: Number(row.company_id), name: row.name, createdAt: iso(row.created_at) });

export interface DueItemRow {
  company_id: Id;
  work_batch_id: Id;
  work_item_id: Id;
  store_generation: number;
  generation_id: string | null;
  trace_parent: string | null;
  work_type: string;
  request: Json;
  attempts: number;
  deadline_at: Timestamp | null;
  kind: WorkItemKind;
  original_work_item_id: Id | null;
  original_application_number: string | null;
  original_status: string | null;
}

export const toDueItem = (row: DueItemRow): Omit<DueItem, "turn"> => ({
  companyId: Number(row.company_id),
  workBatchId: Number(row.work_batch_id),
  workItemId: Number(row.work_item_id),
  storeGeneration: Number(row.store_generation),
  generationId: row.generation_id,
  traceParent: row.trace_parent,
  workType: row.work_type,
  request: storedRequest(row.request),
  attempts: row.attempts,
  deadlineAt: isoOrNull(row.deadline_at),
  kind: row.kind,
  original:
    row.original_work_item_id === null
      ? null
      : { workItemId: Number(row.original_work_item_id), applicationNumber: row.original_application_number, status: row.original_status as WorkItemStatus },
});

export interface ItemToPollRow {
  company_id: Id;
  work_batch_id: Id;
  work_item_id: Id;
  work_type: string;
  application_number: string;
  polls: number;
  trace_parent: string | null;
}

export const toItemToPoll = (row: ItemToPollRow): ItemToPoll => ({
  companyId: Number(row.company_id),
  workBatchId: Number(row.work_batch_id),
  workItemId: Number(row.work_item_id),
  workType: row.work_type,
  applicationNumber: row.application_number,
  polls: row.polls,
  traceParent: row.trace_parent,
});

export interface OutboxRow {
  company_id: Id;
  delivery_id: Id;
  event_id: string;
  work_item_id: Id;
  event_type: WebhookEventType;
  url: string;
  attempts: number;
  created_at: Timestamp;
  /** Only where the claim reads it (claimWebhookDeliveries). */
  trace_parent?: string | null;
}

export const toWebhookDelivery = (row: OutboxRow): WebhookDelivery => ({
  companyId: Number(row.company_id),
  deliveryId: Number(row.delivery_id),
  eventId: row.event_id,
  workItemId: Number(row.work_item_id),
  eventType: row.event_type,
  url: row.url,
  attempts: row.attempts,
  createdAt: iso(row.created_at),
  traceParent: row.trace_parent ?? null,
});

/** One delivery joined with one of its attempts (attempt columns NULL for a delivery without any). */
export interface DeliveryAttemptRow {
  delivery_id: Id;
  event_id: string;
  work_item_id: Id;
  event_type: WebhookEventType;
  url: string;
  status: "Pending" | "Delivered" | "Failed";
  next_attempt_at: Timestamp;
  created_at: Timestamp;
  attempt: number | null;
  at: Timestamp | null;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
}

const DELIVERY_STATUS: Record<DeliveryAttemptRow["status"], WebhookDeliveryStatus> = { Pending: "pending", Delivered: "delivered", Failed: "failed" };

/** Folds the joined rows (ordered by delivery, then attempt) into deliveries, in row order. */
export function toWebhookDeliveryRecords(rows: DeliveryAttemptRow[]): WebhookDeliveryRecord[] {
  const deliveries: WebhookDeliveryRecord[] = [];
  let current: WebhookDeliveryRecord | undefined;
  for (const row of rows) {
    const deliveryId = Number(row.delivery_id);
    if (current?.deliveryId !== deliveryId) {
      const status = DELIVERY_STATUS[row.status];
      current = {
        deliveryId,
        eventId: row.event_id,
        workItemId: Number(row.work_item_id),
        type: row.event_type,
        url: row.url,
        status,
        attempts: [],
        nextAttemptAt: status === "pending" ? iso(row.next_attempt_at) : null,
        createdAt: iso(row.created_at),
      };
      deliveries.push(current);
    }
    if (row.attempt !== null && row.at !== null) {
      current.attempts.push({ at: iso(row.at), statusCode: row.status_code, error: row.error, durationMs: Number(row.duration_ms) });
    }
  }
  return deliveries;
}
