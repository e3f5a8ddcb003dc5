/**
 * What operators read across companies (SPEC §12.2, §16): operators see every company, so these
 * are not tenant reads; the statements that look across companies say so in
 * core/sql-operator-reads.ts.
 */
import type { WorkBatchCounts, WorkItemStatus, WorkItemView } from "../../domain/views.ts";
import { FOLLOW_UP_KINDS } from "../../domain/work-item-kinds.ts";
import type { SignInDetail } from "./operators.ts";
import type { ListWebhookDeliveriesQuery, WebhookDeliveryRecord } from "./webhooks.ts";

export interface CompanyOverview {
  companyId: number;
  name: string;
  counts: WorkBatchCounts;
  openBatchItems: number;
  oldestNewAt: string | null;
  failedLast24h: number;
  pendingWebhookDeliveries: number;
  /** Of those, the ones whose last attempt failed: a receiver in trouble. */
  retryingWebhookDeliveries: number;
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
  /** Webhook delivery attempts that got no 2xx (their time), retried or not: a receiver failing now shows here first. */
  deliveryAttemptsFailed: number;
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

/**
 * The kinds of timeline entry: the item's creation, its history entries (core/transition.ts), its
 * webhook attempts; a follow-up's kind is one of the item's changes or its withdrawal, received or
 * applied (its id in `detail`; SPEC §15).
 */
export const TIMELINE_KINDS = ["created", "status", "attempt", "webhook", "operator", ...FOLLOW_UP_KINDS] as const;

export interface TimelineEntry {
  at: string;
  kind: (typeof TIMELINE_KINDS)[number];
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
  /** How an `operator.signin` happened (SPEC §19); null on every other action. */
  signIn: SignInDetail | null;
  /** How many items a `company.erased` took (SPEC §22); null on every other action. */
  items: number | null;
}

/** One noun per thing acted on: a work item, the bot, a webhook delivery, a company (its erase, SPEC §22, said as it ended). */
export const AUDIT_ACTIONS = ["workitem.retry", "workitem.cancel", "bot.pause", "bot.resume", "delivery.redeliver", "delivery.stop", "operator.signin", "company.erased"] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What operators read, across companies (SPEC §12.2). */
export interface OperatorReadsStore {
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
  /** New items whose deadlineAt is before `now`, over all companies: the items_overdue gauge, read on every scrape (SPEC §17). */
  countOverdueItems(now: string): Promise<number>;
  recordBotPass(pass: BotPassSummary): Promise<void>;
  lastBotPass(): Promise<BotPassSummary | undefined>;
  pausedWorkTypes(): Promise<string[]>;
  /** The item with every recorded step, oldest first; undefined when unknown. */
  getWorkItemTimeline(workItemId: number): Promise<{ item: OperatorWorkItemView; timeline: TimelineEntry[] } | undefined>;
  /** Deliveries across companies (or of one), newest first, each with its attempts and company. */
  listAllWebhookDeliveries(query: ListWebhookDeliveriesQuery & { companyId?: number }): Promise<Array<WebhookDeliveryRecord & { companyId: number }>>;
  /** Newest first. */
  listAudit(query: { beforeAuditId?: number; limit: number }): Promise<AuditEntry[]>;
}
