/**
 * What operators read and do across companies (SPEC §12.2). Every change is one transaction
 * with its audit entry and the item's timeline entries, so the log never claims an action that
 * did not happen, nor misses one that did.
 */
import type { DatabasePort, Queryable, Statement } from "../port.ts";
import { iso, toWebhookDeliveryRecords, toWorkItemView, type DeliveryAttemptRow, type WorkItemRow } from "../rows.ts";
import type {
  Activity,
  AuditAction,
  AuditEntry,
  CompanyOverview,
  DeadlineOverview,
  OperatorAction,
  OperatorItemOutcome,
  OperatorWorkItemsQuery,
  OperatorWorkItemView,
  RetryFilter,
  Store,
  TimelineEntry,
} from "../store.ts";
import { countKeyFor, emptyCounts, type WorkItemStatus } from "../../domain/views.ts";
import { ITEM_COLUMNS, SQL } from "./sql.ts";
import { countIntoBatch, openBatchFor } from "./batches.ts";
import { OPS_SQL } from "./sql-operations.ts";
import { transition, type HistoryEntry } from "./transition.ts";
import { listDeliveriesStatement } from "./webhooks.ts";

type OperationsOperations = Pick<
  Store,
  | "companyOverview"
  | "deadlineOverview"
  | "countSubmittedSince"
  | "activitySince"
  | "hourlyActivity"
  | "countAllWorkItems"
  | "operatorStopWebhookDelivery"
  | "recordBotPass"
  | "lastBotPass"
  | "pausedWorkTypes"
  | "setWorkTypePaused"
  | "listAllWorkItems"
  | "getWorkItemTimeline"
  | "retryWorkItem"
  | "retryWorkItems"
  | "operatorCancelWorkItem"
  | "operatorRedeliverWebhook"
  | "listAllWebhookDeliveries"
  | "listAudit"
>;

type Id = number | string;
const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface ActivityRow {
  measure: keyof Activity;
  hour: Id;
  items: Id;
}

const noActivity = (): Activity => ({ submitted: 0, succeeded: 0, failed: 0, deliveriesFailed: 0 });

async function audit(
  tx: Queryable,
  action: OperatorAction,
  what: AuditAction,
  target: { companyId?: number; workItemId?: number; workType?: string; deliveryId?: number },
): Promise<void> {
  await tx.run(OPS_SQL.insertAudit, [
    action.at,
    action.operator.operatorId,
    action.operator.email,
    what,
    target.companyId ?? null,
    target.workItemId ?? null,
    target.workType ?? null,
    target.deliveryId ?? null,
    action.reason,
  ]);
}

const operatorView = (row: WorkItemRow): OperatorWorkItemView => ({ ...toWorkItemView(row), companyId: Number(row.company_id) });

/**
 * Failed → New in the company's Open batch of the item's work type, opening one (or closing a
 * full one and opening the next) as intake does, under the same lock on the Open batch.
 */
async function retryOne(tx: Queryable, companyId: number, workItemId: number, workType: string, batchMaxItems: number, action: OperatorAction) {
  const workBatchId = await openBatchFor(tx, { companyId, workType, now: action.at, batchMaxItems });
  // The audit entry and the batch's count come before the transition: it appends the event last.
  const current = await tx.one<{ status: string }>(OPS_SQL.lockFailedItem, [companyId, workItemId]);
  if (current?.status !== "Failed") return undefined;
  await countIntoBatch(tx, companyId, workBatchId);
  await audit(tx, action, "workitem.retry", { companyId, workItemId, workType });
  return transition(tx, OPS_SQL.retryItem, [companyId, workItemId, workBatchId, action.at], {
    companyId,
    now: action.at,
    from: "Failed",
    history: [
      { kind: "operator", detail: "Retry", action },
      { kind: "status", status: "New", detail: `Back in batch ${workBatchId}` },
    ],
    event: "workitem.retried",
  });
}

export function operationsOperations(db: DatabasePort): OperationsOperations {
  return {
    async companyOverview({ now }) {
      const since = new Date(Date.parse(now) - DAY_MS).toISOString();
      const [companies, counts, openItems, newItems, inProgress, recentFailures, pending, overdue] = await Promise.all([
        db.all<{ company_id: Id; name: string }>(OPS_SQL.overviewCompanies),
        db.all<{ company_id: Id; status: WorkItemStatus; item_count: Id }>(OPS_SQL.overviewCounts),
        db.all<{ company_id: Id; items: Id }>(OPS_SQL.overviewOpenBatchItems),
        db.all<{ company_id: Id; new_items: Id; oldest: string | Date }>(OPS_SQL.overviewNewItems),
        db.all<{ company_id: Id; items: Id }>(OPS_SQL.overviewInProgressItems),
        db.all<{ company_id: Id; failed: Id }>(OPS_SQL.overviewRecentFailures, [since]),
        db.all<{ company_id: Id; pending: Id }>(SQL.pendingDeliveriesByCompany),
        db.all<{ company_id: Id; overdue: Id }>(OPS_SQL.overviewOverdue, [now]),
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
      set(pending, (company, row) => (company.pendingWebhookDeliveries = Number(row.pending)));
      set(overdue, (company, row) => (company.overdue = Number(row.overdue)));
      return [...byCompany.values()];
    },

    async deadlineOverview({ now, limit }) {
      const rows = await db.all<{ deadline_at: string | Date | null; unsubmitted: Id; companies: Id }>(OPS_SQL.overviewDeadlines, [now, limit]);
      const overview: DeadlineOverview = { overdue: 0, next: [] };
      for (const row of rows) {
        if (row.deadline_at === null) overview.overdue = Number(row.unsubmitted);
        else overview.next.push({ deadlineAt: iso(row.deadline_at), unsubmitted: Number(row.unsubmitted), companies: Number(row.companies) });
      }
      return overview;
    },

    async countSubmittedSince(since) {
      const rows = await db.all<{ submitted: Id }>(OPS_SQL.overviewSubmittedSince, [since]);
      return rows.reduce((sum, row) => sum + Number(row.submitted), 0);
    },

    async activitySince(since) {
      const activity = noActivity();
      for (const row of await db.all<ActivityRow>(OPS_SQL.activitySince, [since])) activity[row.measure] += Number(row.items);
      return activity;
    },

    async hourlyActivity(since) {
      const byHour = new Map<number, Activity>();
      for (const row of await db.all<ActivityRow>(OPS_SQL.hourlyActivity, [since])) {
        const hour = Number(row.hour);
        const activity = byHour.get(hour) ?? noActivity();
        activity[row.measure] += Number(row.items);
        byHour.set(hour, activity);
      }
      return [...byHour.entries()].sort(([a], [b]) => a - b).map(([hour, activity]) => ({ hour: new Date(hour * HOUR_MS).toISOString(), ...activity }));
    },

    async recordBotPass(pass) {
      await db.run(OPS_SQL.recordBotPass, [1, pass.startedAt, pass.finishedAt, pass.submitted, pass.succeeded, pass.failed, pass.retried]);
    },

    async lastBotPass() {
      const row = await db.one<{ started_at: string | Date; finished_at: string | Date; submitted: Id; succeeded: Id; failed: Id; retried: Id }>(
        OPS_SQL.lastBotPass,
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
      return (await db.all<{ work_type: string }>(OPS_SQL.pausedWorkTypes)).map((row) => row.work_type);
    },

    setWorkTypePaused(workType, paused, action) {
      return db.transaction(async (tx) => {
        if (paused) await tx.run(OPS_SQL.pauseWorkType, [workType, action.at]);
        else await tx.run(OPS_SQL.resumeWorkType, [workType]);
        await audit(tx, action, paused ? "bot.pause" : "bot.resume", { workType });
      });
    },

    async listAllWorkItems(query) {
      const { statement, values } = listAllWorkItemsStatement(query);
      return (await db.all<WorkItemRow>(statement, values)).map(operatorView);
    },

    async countAllWorkItems(query, cap) {
      const { statement, values } = listAllWorkItemsStatement({ ...query, limit: cap }, "count");
      return Number((await db.one<{ items: Id }>(statement, values))?.items ?? 0);
    },

    async getWorkItemTimeline(workItemId) {
      const row = await db.one<WorkItemRow>(OPS_SQL.findWorkItem, [workItemId]);
      if (!row) return undefined;
      const item = operatorView(row);
      const [history, webhooks] = await Promise.all([
        db.all<HistoryRow>(OPS_SQL.itemHistory, [item.companyId, workItemId]),
        db.all<WebhookAttemptRow>(OPS_SQL.itemWebhookAttempts, [item.companyId, workItemId]),
      ]);
      const timeline: TimelineEntry[] = [
        { at: item.createdAt, kind: "created", status: "New", detail: `In batch ${item.workBatchId}`, operator: null, reason: null },
        ...history.map(toTimelineEntry),
        ...webhooks.map(webhookEntry),
      ];
      // Stable: entries of one instant keep the order they were recorded in.
      timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      return { item, timeline };
    },

    async retryWorkItem(workItemId, { batchMaxItems }, action) {
      return db.transaction<OperatorItemOutcome>(async (tx) => {
        const current = await tx.one<WorkItemRow>(OPS_SQL.findWorkItem, [workItemId]);
        if (!current) return { kind: "notFound" };
        if (current.status !== "Failed") return { kind: "conflict", item: operatorView(current) };
        const companyId = Number(current.company_id);
        const retried = await retryOne(tx, companyId, workItemId, current.work_type, batchMaxItems, action);
        return retried ? { kind: "done", item: operatorView(retried) } : { kind: "conflict", item: operatorView(current) };
      });
    },

    retryWorkItems(filter, { batchMaxItems, limit }, action) {
      return db.transaction(async (tx) => {
        const { statement, values } = failedItemsStatement(filter, limit);
        const items = await tx.all<{ company_id: Id; work_item_id: Id; work_type: string }>(statement, values);
        let retried = 0;
        for (const item of items) {
          if (await retryOne(tx, Number(item.company_id), Number(item.work_item_id), item.work_type, batchMaxItems, action)) retried += 1;
        }
        return retried;
      });
    },

    operatorCancelWorkItem(workItemId, action) {
      return db.transaction<OperatorItemOutcome>(async (tx) => {
        const current = await tx.one<WorkItemRow>(OPS_SQL.findWorkItem, [workItemId]);
        if (!current) return { kind: "notFound" };
        const companyId = Number(current.company_id);
        const batch = await tx.one<{ status: string }>(SQL.lockItemBatch, [companyId, workItemId]);
        const cancelled =
          batch?.status === "Open"
            ? await transition(tx, SQL.cancelWorkItem, [companyId, workItemId, action.at], {
                companyId,
                now: action.at,
                from: "New",
                history: [
                  { kind: "operator", detail: "Cancel", action },
                  { kind: "status", status: "Cancelled", detail: "Cancelled by an operator" },
                ],
              })
            : undefined;
        if (!cancelled) return { kind: "conflict", item: operatorView(current) };
        await audit(tx, action, "workitem.cancel", { companyId, workItemId, workType: current.work_type });
        return { kind: "done", item: operatorView(cancelled) };
      });
    },

    operatorRedeliverWebhook(deliveryId, action) {
      return db.transaction(async (tx) => {
        const delivery = await tx.one<{ company_id: Id }>(OPS_SQL.findDeliveryCompany, [deliveryId]);
        if (!delivery) return false;
        const companyId = Number(delivery.company_id);
        if ((await tx.run(SQL.redeliverWebhook, [companyId, deliveryId, action.at])) !== 1) return false;
        await audit(tx, action, "webhook.redeliver", { companyId, deliveryId });
        return true;
      });
    },

    operatorStopWebhookDelivery(deliveryId, action) {
      return db.transaction(async (tx) => {
        const delivery = await tx.one<{ company_id: Id }>(OPS_SQL.findDeliveryCompany, [deliveryId]);
        if (!delivery) return "notFound";
        const companyId = Number(delivery.company_id);
        if ((await tx.run(OPS_SQL.stopWebhookDelivery, [companyId, deliveryId, action.at, `Stopped by ${action.operator.email}: ${action.reason}`])) !== 1) return "notPending";
        await audit(tx, action, "delivery.stop", { companyId, deliveryId });
        return "stopped";
      });
    },

    async listAllWebhookDeliveries(query) {
      const { statement, values } = listDeliveriesStatement(query.companyId, query);
      const rows = await db.all<DeliveryAttemptRow & { company_id: Id }>(statement, values);
      const companies = new Map(rows.map((row) => [Number(row.delivery_id), Number(row.company_id)]));
      return toWebhookDeliveryRecords(rows).map((delivery) => ({ ...delivery, companyId: companies.get(delivery.deliveryId)! }));
    },

    async listAudit({ beforeAuditId, limit }) {
      const rows = await db.all<AuditRow>(OPS_SQL.listAudit, [beforeAuditId ?? Number.MAX_SAFE_INTEGER, limit]);
      return rows.map(toAuditEntry);
    },
  };
}

interface HistoryRow {
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

interface WebhookAttemptRow {
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
  action: AuditAction;
  company_id: Id | null;
  work_item_id: Id | null;
  work_type: string | null;
  delivery_id: Id | null;
  reason: string;
}

const numberOrNull = (value: Id | null) => (value === null ? null : Number(value));

const toAuditEntry = (row: AuditRow): AuditEntry => ({
  auditId: Number(row.audit_id),
  at: iso(row.at),
  operator: { operatorId: row.operator_id, email: row.operator_email },
  action: row.action,
  target: {
    companyId: numberOrNull(row.company_id),
    workItemId: numberOrNull(row.work_item_id),
    workType: row.work_type,
    deliveryId: numberOrNull(row.delivery_id),
  },
  reason: row.reason,
});

const ITEM_FILTERS = [
  ["companyId", "company_id"],
  ["status", "status"],
  ["customerReference", "customer_reference"],
  ["applicationNumber", "application_number"],
  ["registrationNumber", "registration_number"],
  ["workBatchId", "work_batch_id"],
] as const;

const allItemStatements = new Map<string, Statement>();

/**
 * The operator's WorkItems page: one statement per combination of filters, like the
 * integrator's (work-items.ts), over the cross-company indexes of migration 0009. On SQLite, a
 * status other than New also says `status <> 'New'`, which lets it use its partial index. The
 * count reads the same rows, at most $2 of them ($1 then has no cursor).
 */
function listAllWorkItemsStatement(query: OperatorWorkItemsQuery, shape: "page" | "count" = "page"): { statement: Statement; values: unknown[] } {
  const used = ITEM_FILTERS.filter(([field]) => query[field] !== undefined);
  const values: unknown[] = [query.beforeWorkItemId ?? Number.MAX_SAFE_INTEGER, query.limit, ...used.map(([field]) => query[field])];
  const byDeadline = query.deadlineBefore !== undefined;
  if (byDeadline) values.push(query.deadlineBefore);
  const notNew = query.status !== undefined && query.status !== "New";
  const key = `${shape === "count" ? "count_" : ""}${used.map(([, column]) => column).join("_")}${notNew ? "_not_new" : ""}${byDeadline ? "_deadline" : ""}`;
  let statement = allItemStatements.get(key);
  if (!statement) {
    const conditions = used.map(([, column], index) => `${column} = $${index + 3}`);
    if (notNew) conditions.push("status <> 'New'");
    if (byDeadline) conditions.push(`deadline_at < $${used.length + 3}`);
    conditions.push("work_item_id < $1");
    statement = {
      name: `list_all_work_items${key ? `_${key}` : ""}`,
      text:
        shape === "page"
          ? `SELECT ${ITEM_COLUMNS} FROM work_items WHERE ${conditions.join(" AND ")} ORDER BY work_item_id DESC LIMIT $2`
          : `SELECT COUNT(*) AS items FROM (SELECT company_id FROM work_items WHERE ${conditions.join(" AND ")} LIMIT $2) capped`,
    };
    allItemStatements.set(key, statement);
  }
  return { statement, values };
}

const RETRY_FILTERS = [
  ["companyId", "company_id = "],
  ["failedAfter", "completed_at >= "],
  ["code", "code"],
] as const;
const retryStatements = new Map<string, Statement>();

/** Failed items matching the bulk retry's filters, oldest failure first. */
function failedItemsStatement(filter: RetryFilter, limit: number): { statement: Statement; values: unknown[] } {
  const used = RETRY_FILTERS.filter(([field]) => filter[field] !== undefined);
  const values: unknown[] = [limit, ...used.map(([field]) => filter[field])];
  const key = used.map(([field]) => field).join("_");
  let statement = retryStatements.get(key);
  if (!statement) {
    statement = {
      name: `failed_items_to_retry${key ? `_${key}` : ""}`,
      text: (d) => {
        const conditions = used.map(([field, condition], index) =>
          field === "code" ? `${d.jsonText("error", "code")} = $${index + 2}` : `${condition}$${index + 2}`,
        );
        return `SELECT company_id, work_item_id, work_type FROM work_items
                 WHERE status = 'Failed'${conditions.map((c) => ` AND ${c}`).join("")}
                 ORDER BY completed_at, work_item_id LIMIT $1`;
      },
    };
    retryStatements.set(key, statement);
  }
  return { statement, values };
}

