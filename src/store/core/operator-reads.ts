/**
 * What operators read across companies (SPEC §12.2, §16): the overview and its activity, the
 * items of every company with their timelines, deliveries, the audit log, paused work types and
 * the last bot pass.
 */
import type { DatabasePort } from "../port.ts";
import { iso, toOperatorWorkItemView, toWebhookDeliveryRecords, type DeliveryAttemptRow, type WorkItemRow } from "../rows.ts";
import type { Activity, AuditAction, AuditEntry, CompanyOverview, DeadlineOverview, OperatorReadsStore, SignInDetail, TimelineEntry } from "../store.ts";
import { countKeyFor, emptyCounts, type WorkItemStatus } from "../../domain/views.ts";
import { WEBHOOKS_SQL } from "./sql-webhooks.ts";
import { OPERATOR_READS_SQL } from "./sql-operator-reads.ts";
import type { HistoryEntry } from "./transition.ts";
import { listDeliveriesStatement } from "./webhooks.ts";

type Id = number | string;
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface ActivityRow {
  measure: keyof Activity;
  hour: Id;
  items: Id;
}

const noActivity = (): Activity => ({ submitted: 0, succeeded: 0, failed: 0, deliveriesFailed: 0, deliveryAttemptsFailed: 0 });

export function operatorReadsStore(db: DatabasePort): OperatorReadsStore {
  return {
    async companyOverview({ now }) {
      const since = new Date(Date.parse(now) - DAY_MS).toISOString();
      const [companies, counts, openItems, newItems, inProgress, recentFailures, pending, overdue] = await Promise.all([
        db.all<{ company_id: Id; name: string }>(OPERATOR_READS_SQL.overviewCompanies),
        db.all<{ company_id: Id; status: WorkItemStatus; item_count: Id }>(OPERATOR_READS_SQL.overviewCounts),
        db.all<{ company_id: Id; items: Id }>(OPERATOR_READS_SQL.overviewOpenBatchItems),
        db.all<{ company_id: Id; new_items: Id; oldest: string | Date }>(OPERATOR_READS_SQL.overviewNewItems),
        db.all<{ company_id: Id; items: Id }>(OPERATOR_READS_SQL.overviewInProgressItems),
        db.all<{ company_id: Id; failed: Id }>(OPERATOR_READS_SQL.overviewRecentFailures, [since]),
        db.all<{ company_id: Id; pending: Id; retrying: Id }>(WEBHOOKS_SQL.pendingDeliveriesByCompany),
        db.all<{ company_id: Id; overdue: Id }>(OPERATOR_READS_SQL.overviewOverdue, [now]),
      ]);
      const byCompany = new Map<number, CompanyOverview>();
      for (const row of companies) {
        const companyId = Number(row.company_id);
        byCompany.set(companyId, {
          companyId,
          name: row.name,
          counts: emptyCounts(),
          openBatchItems: 0,
          oldestNewAt: null,
          failedLast24h: 0,
          pendingWebhookDeliveries: 0,
          retryingWebhookDeliveries: 0,
          overdue: 0,
        });
      }
      for (const row of counts) {
        const company = byCompany.get(Number(row.company_id));
        if (company) company.counts[countKeyFor(row.status)] = Number(row.item_count);
      }
      const set = <R extends { company_id: Id }>(rows: R[], apply: (company: CompanyOverview, row: R) => void) => {
        for (const row of rows) {
          const company = byCompany.get(Number(row.company_id));
          if (company) apply(company, row);
        }
      };
      set(openItems, (company, row) => (company.openBatchItems = Number(row.items)));
      set(newItems, (company, row) => {
        company.counts.new = Number(row.new_items);
        company.oldestNewAt = iso(row.oldest);
      });
      set(inProgress, (company, row) => (company.counts.inProgress = Number(row.items)));
      set(recentFailures, (company, row) => (company.failedLast24h = Number(row.failed)));
      set(pending, (company, row) => {
        company.pendingWebhookDeliveries = Number(row.pending);
        company.retryingWebhookDeliveries = Number(row.retrying);
      });
      set(overdue, (company, row) => (company.overdue = Number(row.overdue)));
      return [...byCompany.values()];
    },

    async deadlineOverview({ now, limit }) {
      const rows = await db.all<{ deadline_at: string | Date | null; unsubmitted: Id; company_count: Id }>(OPERATOR_READS_SQL.overviewDeadlines, [now, limit]);
      // One row per deadline, or (node by node on Citus) one per deadline and shard group, added up here.
      let overdue = 0;
      const next = new Map<string, { unsubmitted: number; companies: number }>();
      for (const row of rows) {
        if (row.deadline_at === null) {
          overdue += Number(row.unsubmitted);
          continue;
        }
        const deadlineAt = iso(row.deadline_at);
        const known = next.get(deadlineAt) ?? { unsubmitted: 0, companies: 0 };
        next.set(deadlineAt, { unsubmitted: known.unsubmitted + Number(row.unsubmitted), companies: known.companies + Number(row.company_count) });
      }
      const earliest = [...next.entries()].sort(([a], [b]) => Date.parse(a) - Date.parse(b)).slice(0, limit);
      return { overdue, next: earliest.map(([deadlineAt, load]) => ({ deadlineAt, ...load })) } satisfies DeadlineOverview;
    },

    async countSubmittedSince(since) {
      const rows = await db.all<{ submitted: Id }>(OPERATOR_READS_SQL.overviewSubmittedSince, [since]);
      return rows.reduce((sum, row) => sum + Number(row.submitted), 0);
    },

    async countOverdueItems(now) {
      const rows = await db.all<{ overdue: Id }>(OPERATOR_READS_SQL.overviewOverdue, [now]);
      return rows.reduce((sum, row) => sum + Number(row.overdue), 0);
    },

    async activitySince(since) {
      const activity = noActivity();
      for (const row of await db.all<ActivityRow>(OPERATOR_READS_SQL.activitySince, [since])) activity[row.measure] += Number(row.items);
      return activity;
    },

    async hourlyActivity(since) {
      const byHour = new Map<number, Activity>();
      for (const row of await db.all<ActivityRow>(OPERATOR_READS_SQL.hourlyActivity, [since])) {
        const hour = Number(row.hour);
        const activity = byHour.get(hour) ?? noActivity();
        activity[row.measure] += Number(row.items);
        byHour.set(hour, activity);
      }
      return [...byHour.entries()].sort(([a], [b]) => a - b).map(([hour, activity]) => ({ hour: new Date(hour * HOUR_MS).toISOString(), ...activity }));
    },

    async recordBotPass(pass) {
      await db.run(OPERATOR_READS_SQL.recordBotPass, [1, pass.startedAt, pass.finishedAt, pass.submitted, pass.succeeded, pass.failed, pass.retried]);
    },

    async lastBotPass() {
      const row = await db.one<{ started_at: string | Date; finished_at: string | Date; submitted: Id; succeeded: Id; failed: Id; retried: Id }>(
        OPERATOR_READS_SQL.lastBotPass,
      );
      return (
        row && {
          startedAt: iso(row.started_at),
          finishedAt: iso(row.finished_at),
          submitted: Number(row.submitted),
          succeeded: Number(row.succeeded),
          failed: Number(row.failed),
          retried: Number(row.retried),
        }
      );
    },

    async pausedWorkTypes() {
      return (await db.all<{ work_type: string }>(OPERATOR_READS_SQL.pausedWorkTypes)).map((row) => row.work_type);
    },

    async getWorkItemTimeline(workItemId) {
      const row = await db.one<WorkItemRow>(OPERATOR_READS_SQL.findWorkItem, [workItemId]);
      if (!row) return undefined;
      const item = toOperatorWorkItemView(row);
      const [history, webhooks] = await Promise.all([
        db.all<HistoryRow>(OPERATOR_READS_SQL.itemHistory, [item.companyId, workItemId]),
        db.all<WebhookAttemptRow>(OPERATOR_READS_SQL.itemWebhookAttempts, [item.companyId, workItemId]),
      ]);
      return { item, timeline: timelineOf(item, history, webhooks) };
    },

    async listAllWebhookDeliveries(query) {
      const { statement, values } = listDeliveriesStatement(query.companyId, query);
      const rows = await db.all<DeliveryAttemptRow & { company_id: Id }>(statement, values);
      const companies = new Map(rows.map((row) => [Number(row.delivery_id), Number(row.company_id)]));
      return toWebhookDeliveryRecords(rows).map((delivery) => ({ ...delivery, companyId: companies.get(delivery.deliveryId)! }));
    },

    async listAudit({ beforeAuditId, limit }) {
      const rows = await db.all<AuditRow>(OPERATOR_READS_SQL.listAudit, [beforeAuditId ?? Number.MAX_SAFE_INTEGER, limit]);
      return rows.map(toAuditEntry);
    },
  };
}

/**
 * An item's timeline (SPEC §12.2), oldest first: its creation, its history (in entry order) and
 * its webhook attempts (by time, delivery and attempt). The operator's item and the export
 * (core/export.ts) make it here alike.
 */
export function timelineOf(item: { createdAt: string; workBatchId: number }, history: HistoryRow[], webhooks: WebhookAttemptRow[]): TimelineEntry[] {
  const timeline: TimelineEntry[] = [
    { at: item.createdAt, kind: "created", status: "New", detail: `In batch ${item.workBatchId}`, operator: null, reason: null },
    ...history.map(toTimelineEntry),
    ...webhooks.map(webhookEntry),
  ];
  // Stable: entries of one instant keep the order they were recorded in.
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return timeline;
}

export interface HistoryRow {
  at: string | Date;
  kind: HistoryEntry["kind"];
  status: WorkItemStatus | null;
  detail: string | null;
  operator_id: string | null;
  operator_email: string | null;
  reason: string | null;
}

const toTimelineEntry = (row: HistoryRow): TimelineEntry => ({
  at: iso(row.at),
  kind: row.kind,
  status: row.status,
  detail: row.detail,
  operator: row.operator_id === null ? null : { operatorId: row.operator_id, email: row.operator_email ?? "" },
  reason: row.reason,
});

export interface WebhookAttemptRow {
  delivery_id: Id;
  event_type: string;
  url: string;
  attempt: Id;
  at: string | Date;
  status_code: number | null;
  error: string | null;
  duration_ms: Id;
}

function webhookEntry(row: WebhookAttemptRow): TimelineEntry {
  const answer = row.status_code === null ? "no answer" : `HTTP ${row.status_code}`;
  const error = row.error ? `: ${row.error}` : "";
  return {
    at: iso(row.at),
    kind: "webhook",
    status: null,
    detail: `${row.event_type} to ${row.url}, delivery ${row.delivery_id} attempt ${row.attempt}: ${answer}${error} (${row.duration_ms} ms)`,
    operator: null,
    reason: null,
  };
}

interface AuditRow {
  audit_id: Id;
  at: string | Date;
  operator_id: string;
  operator_email: string;
  /** As written: entries from before the actions were renamed keep their old name. */
  action: string;
  company_id: Id | null;
  work_item_id: Id | null;
  work_type: string | null;
  delivery_id: Id | null;
  reason: string;
  sign_in_method: SignInDetail["method"] | null;
  sign_in_issuer: string | null;
  sign_in_subject: string | null;
  items: Id | null;
}

function signInOf(row: AuditRow): SignInDetail | null {
  if (row.sign_in_method === "oidc") return { method: "oidc", issuer: row.sign_in_issuer ?? "", subject: row.sign_in_subject ?? "" };
  return row.sign_in_method === "password" ? { method: "password" } : null;
}

const numberOrNull = (value: Id | null) => (value === null ? null : Number(value));

/** Names entries written before the audit's actions had one noun per thing were stored under. */
const FORMER_AUDIT_ACTIONS: Record<string, AuditAction> = { "webhook.redeliver": "delivery.redeliver" };

const toAuditEntry = (row: AuditRow): AuditEntry => ({
  auditId: Number(row.audit_id),
  at: iso(row.at),
  operator: { operatorId: row.operator_id, email: row.operator_email },
  action: FORMER_AUDIT_ACTIONS[row.action] ?? (row.action as AuditAction),
  target: {
    companyId: numberOrNull(row.company_id),
    workItemId: numberOrNull(row.work_item_id),
    workType: row.work_type,
    deliveryId: numberOrNull(row.delivery_id),
  },
  reason: row.reason,
  signIn: signInOf(row),
  items: numberOrNull(row.items),
});
