/**
 * The store's operations: what operators read and do across companies, and the audit log.
 *
 * Operations (SPEC §12): operators see every company, so these are not tenant operations; the
 * statements that look across companies say so in core/sql-operations.ts.
 */
import type { WorkBatchCounts, WorkItemStatus, WorkItemView } from "../../domain/views.ts";
import type { ListWebhookDeliveriesQuery, WebhookDeliveryRecord } from "./webhooks.ts";

/**
 * Who acts, why and when: every state-changing operator call passes one, and the store writes
 * the audit entry (and the item's timeline entry) in the transaction of the change itself.
 */
export interface OperatorAction {
  operator: { operatorId: string; email: string };
  reason: string;
  at: string;
}

export interface CompanyOverview {
  companyId: number;
  name: string;
  counts: WorkBatchCounts;
  openBatchItems: number;
  oldestNewAt: string | null;
  failedLast24h: number;
  pendingWebhookDeliveries: number;
  /** New items whose deadlineAt has passed (SPEC §16). */
  overdue: number;
}

/** What happened over a stretch of time, over all companies (SPEC §16). */
export interface Activity {
  /** Items filed with the authority (their submittedAt). */
  submitted: number;
  /** Items that became Successful (their completedAt), and are still. */
  succeeded: number;
  /** Items that became Failed (their completedAt), and are still. */
  failed: number;
  /** Webhook deliveries given up or stopped (their end). */
  deliveriesFailed: number;
}

/** The activity of one hour: `hour` is the UTC start of the hour. */
export interface HourlyActivity extends Activity {
  hour: string;
}

/**
 * The queue by deadline (SPEC §14): items still New, the ones whose deadline has passed and those
 * of each of the next deadlines, over all companies.
 */
export interface DeadlineOverview {
  /** New items whose deadlineAt has passed. */
  overdue: number;
  /** The next distinct deadlines (deadlineAt at or after now), earliest first. */
  next: DeadlineLoad[];
}

export interface DeadlineLoad {
  deadlineAt: string;
  /** New items due at this deadline. */
  unsubmitted: number;
  /** The companies those items belong to. */
  companies: number;
}

export interface BotPassSummary {
  startedAt: string;
  finishedAt: string;
  submitted: number;
  succeeded: number;
  failed: number;
  retried: number;
}

/** An item as operators see it: the integrator's view plus the company it belongs to. */
export type OperatorWorkItemView = WorkItemView & { companyId: number };

export interface OperatorWorkItemsQuery {
  companyId?: number;
  status?: WorkItemStatus;
  customerReference?: string;
  applicationNumber?: string;
  registrationNumber?: string;
  deadlineBefore?: string;
  /** Only the items of this batch (with companyId, through the company's batch index). */
  workBatchId?: number;
  /** Keyset: only items with a smaller id (newest first). */
  beforeWorkItemId?: number;
  limit: number;
}

export interface TimelineEntry {
  at: string;
  /** change, withdraw: one of the item's changes or its withdrawal, received or applied (its id in `detail`; SPEC §15). */
  kind: "created" | "status" | "attempt" | "webhook" | "operator" | "change" | "withdraw";
  status: WorkItemStatus | null;
  detail: string | null;
  operator: { operatorId: string; email: string } | null;
  reason: string | null;
}

export interface AuditEntry {
  auditId: number;
  at: string;
  operator: { operatorId: string; email: string };
  action: AuditAction;
  target: { companyId: number | null; workItemId: number | null; workType: string | null; deliveryId: number | null };
  reason: string;
}

export type AuditAction = "workitem.retry" | "workitem.cancel" | "bot.pause" | "bot.resume" | "webhook.redeliver" | "delivery.stop";

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

/** What operators read and do, across companies (SPEC §12.2). */
export interface OperationsStore {
  /** Every company with its counts; read from counters the database keeps, not by counting items. */
  companyOverview(input: { now: string }): Promise<CompanyOverview[]>;
  /** New items past their deadline, and the `limit` next deadlines with the New items due then. */
  deadlineOverview(input: { now: string; limit: number }): Promise<DeadlineOverview>;
  /** The activity at or after `since`, over all companies. */
  activitySince(since: string): Promise<Activity>;
  /** The activity at or after `since` per hour, oldest first; hours without any are left out. */
  hourlyActivity(since: string): Promise<HourlyActivity[]>;
  /** Items filed with the authority (their submittedAt) at or after `since`, over all companies. */
  countSubmittedSince(since: string): Promise<number>;
  recordBotPass(pass: BotPassSummary): Promise<void>;
  lastBotPass(): Promise<BotPassSummary | undefined>;
  pausedWorkTypes(): Promise<string[]>;
  /** Pauses or resumes filing of a work type, with its audit entry. */
  setWorkTypePaused(workType: string, paused: boolean, action: OperatorAction): Promise<void>;
  /** Items across companies (or of one), newest first. */
  listAllWorkItems(query: OperatorWorkItemsQuery): Promise<OperatorWorkItemView[]>;
  /** How many items match the query's filters (not its cursor), counted up to `cap` at most. */
  countAllWorkItems(query: Omit<OperatorWorkItemsQuery, "limit" | "beforeWorkItemId">, cap: number): Promise<number>;
  /** The item with every recorded step, oldest first; undefined when unknown. */
  getWorkItemTimeline(workItemId: number): Promise<{ item: OperatorWorkItemView; timeline: TimelineEntry[] } | undefined>;
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
  /** Deliveries across companies (or of one), newest first, each with its attempts and company. */
  listAllWebhookDeliveries(query: ListWebhookDeliveriesQuery & { companyId?: number }): Promise<Array<WebhookDeliveryRecord & { companyId: number }>>;
  /** Newest first. */
  listAudit(query: { beforeAuditId?: number; limit: number }): Promise<AuditEntry[]>;
}
