/** Row-to-view mapping shared by both backends; their columns carry the same names. */
import type { WorkBatchCounts, WorkBatchStatus, WorkBatchView, WorkItemStatus, WorkItemView } from "../domain/views.ts";
import { countKeyFor, emptyCounts } from "../domain/views.ts";
import type { ApiKeyRecord, Company } from "./store.ts";

type Timestamp = string | Date;
type Json = string | Record<string, unknown>;

export interface WorkItemRow {
  work_item_id: number | string;
  company_id: number | string;
  work_batch_id: number | string;
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
}

export interface WorkBatchRow {
  work_batch_id: number | string;
  work_type: string;
  status: string;
  created_at: Timestamp;
  closed_at: Timestamp | null;
  completed_at: Timestamp | null;
}

export const iso = (value: Timestamp): string => (value instanceof Date ? value.toISOString() : value);
const isoOrNull = (value: Timestamp | null): string | null => (value === null ? null : iso(value));
const parsed = <T>(value: Json | null): T | null => (value === null ? null : ((typeof value === "string" ? JSON.parse(value) : value) as T));

export function toWorkItemView(row: WorkItemRow): WorkItemView {
  return {
    workItemId: Number(row.work_item_id),
    workBatchId: Number(row.work_batch_id),
    workType: row.work_type,
    status: row.status as WorkItemStatus,
    customerReference: row.customer_reference,
    documentReference: row.document_reference,
    webhookUrl: row.webhook_url,
    request: parsed<Record<string, unknown>>(row.request) ?? {},
    result: parsed(row.result),
    error: parsed(row.error),
    attempts: row.attempts,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    completedAt: isoOrNull(row.completed_at),
  };
}

export function toWorkBatchView(row: WorkBatchRow, statusCounts: Array<{ status: string; count: number | string }>): WorkBatchView {
  const counts: WorkBatchCounts = emptyCounts();
  for (const { status, count } of statusCounts) counts[countKeyFor(status as WorkItemStatus)] = Number(count);
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
  company_id: number | string;
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

export const toCompany = (row: { company_id: number | string; name: string; created_at: Timestamp }): Company => ({
  companyId: Number(row.company_id),
  name: row.name,
  createdAt: iso(row.created_at),
});
