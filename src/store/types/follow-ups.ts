/** A change or withdrawal of a create's document (SPEC §15): its add, and why an original may refuse it. */
import type { BatchKey, WorkItemKind, WorkItemStatus } from "../../domain/views.ts";
import type { FollowUpKind } from "../../domain/work-item-kinds.ts";
import type { IdempotencyRecord } from "./work-items.ts";

/**
 * A change or withdrawal of a filed document (SPEC §15), stored as a work item of its own kind in
 * the company's Open batch, or applied to its original at once while that is not sent yet.
 */
export interface NewFollowUp {
  companyId: number;
  workType: string;
  batchMaxItems: number;
  kind: FollowUpKind;
  originalWorkItemId: number;
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  /** The normalised request body, as the item's view gives it back. */
  request: Record<string, unknown>;
  /** A change: the declaration fields it changes. */
  changes?: Record<string, unknown>;
  /** A change of exportDate: the original's deadline if the change is applied before filing. */
  movedDeadlineAt?: string | null;
  /** CHANGE_CUTOFF_HOURS, in milliseconds. */
  changeCutoffMs: number;
  idempotency?: IdempotencyRecord;
  now: string;
  /** As WorkItemFields.traceParent. */
  traceParent?: string | null;
}

/** Why an original cannot take a change or withdrawal now (a 409 with this code). */
export interface FollowUpRefusal {
  code: "ORIGINAL_CLOSED" | "WITHDRAWAL_PENDING" | "CHANGE_CUTOFF_PASSED";
  originalStatus: WorkItemStatus;
}

export type AddFollowUpOutcome =
  | { kind: "created"; key: BatchKey }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; key: BatchKey }
  | { kind: "keyReused" }
  /** No such item in the company. */
  | { kind: "originalNotFound" }
  /** The id names a change or withdrawal, not a create. */
  | { kind: "notAnOriginal"; originalKind: WorkItemKind }
  | ({ kind: "refused" } & FollowUpRefusal);

/** Changes and withdrawals (API). */
export interface FollowUpsStore {
  /** A change or withdrawal (NewFollowUp), in one transaction with its idempotency key. Keys are shared with the adds. */
  addFollowUp(input: NewFollowUp): Promise<AddFollowUpOutcome>;
}
