/**
 * What operators do across companies (SPEC §12.2), each with its audit entry, written in the
 * transaction of the change itself.
 */
import type { OperatorWorkItemView } from "./operator-reads.ts";

/**
 * Who acts, why and when: every state-changing operator call passes one, and the store writes
 * the audit entry (and the item's timeline entry) in the transaction of the change itself.
 */
export interface OperatorAction {
  operator: { operatorId: string; email: string };
  reason: string;
  at: string;
}

export type OperatorItemOutcome =
  | { kind: "done"; item: OperatorWorkItemView }
  /** The item is not in a state the action applies to. */
  | { kind: "conflict"; item: OperatorWorkItemView }
  | { kind: "notFound" };

export interface RetryFilter {
  companyId?: number;
  /** Only items that failed at or after this instant. */
  failedAfter?: string;
  /** Only items whose error has this code. */
  code?: string;
}

/** What operators do, across companies (SPEC §12.2). */
export interface OperatorActionsStore {
  /** Pauses or resumes filing of a work type, with its audit entry. */
  setWorkTypePaused(workType: string, paused: boolean, action: OperatorAction): Promise<void>;
  /**
   * Failed → New with attempts reset, into its company's Open batch of its work type (opening one,
   * or rolling over a full one, as intake does); emits `workitem.retried`; writes the audit and
   * timeline entries. All in one transaction. `conflict` unless the item is Failed.
   */
  retryWorkItem(workItemId: number, input: { batchMaxItems: number }, action: OperatorAction): Promise<OperatorItemOutcome>;
  /** Up to `limit` Failed items matching `filter`, oldest failure first, retried as `retryWorkItem` does; resolves to how many. */
  retryWorkItems(filter: RetryFilter, input: { batchMaxItems: number; limit: number }, action: OperatorAction): Promise<number>;
  /** As the integrator's cancel (`cancelWorkItem`), with the audit and timeline entries. */
  operatorCancelWorkItem(workItemId: number, action: OperatorAction): Promise<OperatorItemOutcome>;
  /** As `redeliverWebhook`, for a delivery of any company, with the audit entry. False when unknown. */
  operatorRedeliverWebhook(deliveryId: number, action: OperatorAction): Promise<boolean>;
  /**
   * Gives up a pending delivery of any company now (SPEC §16): Failed, ended at `action.at`, with
   * the audit entry `delivery.stop`. An attempt under way loses its lease, so its outcome is not
   * recorded. `notPending` for a delivery that already ended.
   */
  operatorStopWebhookDelivery(deliveryId: number, action: OperatorAction): Promise<"stopped" | "notPending" | "notFound">;
}
