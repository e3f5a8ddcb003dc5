/**
 * What operators do (SPEC §12.2): pause and resume a work type, retry and cancel items, redeliver
 * and stop deliveries, across companies. Every change is one transaction with its audit entry and
 * the item's timeline entries, so the log never claims an action that did not happen, nor misses
 * one that did.
 */
import type { DatabasePort, Queryable, Statement } from "../port.ts";
import { toOperatorWorkItemView, type WorkItemRow } from "../rows.ts";
import type { AuditAction, OperatorAction, OperatorActionsStore, OperatorItemOutcome, RetryFilter } from "../store.ts";
import { countIntoBatch, openBatchFor } from "./batches.ts";
import { WEBHOOKS_SQL } from "./sql-webhooks.ts";
import { WORK_ITEMS_SQL } from "./sql-work-items.ts";
import { OPERATOR_ACTIONS_SQL } from "./sql-operator-actions.ts";
import { OPERATOR_READS_SQL } from "./sql-operator-reads.ts";
import { transition } from "./transition.ts";

type Id = number | string;

async function audit(
  tx: Queryable,
  action: OperatorAction,
  what: AuditAction,
  target: { companyId?: number; workItemId?: number; workType?: string; deliveryId?: number },
): Promise<void> {
  await tx.run(OPERATOR_ACTIONS_SQL.insertAudit, [
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

/**
 * Failed → New in the company's Open batch of the item's work type, opening one (or closing a
 * full one and opening the next) as intake does, under the same lock on the Open batch.
 */
async function retryOne(tx: Queryable, companyId: number, workItemId: number, workType: string, batchMaxItems: number, action: OperatorAction) {
  const workBatchId = await openBatchFor(tx, { companyId, workType, now: action.at, batchMaxItems });
  // The audit entry and the batch's count come before the transition: it appends the event last.
  const current = await tx.one<{ status: string }>(OPERATOR_ACTIONS_SQL.lockFailedItem, [companyId, workItemId]);
  if (current?.status !== "Failed") return undefined;
  await countIntoBatch(tx, companyId, workBatchId);
  await audit(tx, action, "workitem.retry", { companyId, workItemId, workType });
  return transition(tx, OPERATOR_ACTIONS_SQL.retryItem, [companyId, workItemId, workBatchId, action.at], {
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

export function operatorActionsStore(db: DatabasePort): OperatorActionsStore {
  return {
    setWorkTypePaused(workType, paused, action) {
      return db.transaction(async (tx) => {
        if (paused) await tx.run(OPERATOR_ACTIONS_SQL.pauseWorkType, [workType, action.at]);
        else await tx.run(OPERATOR_ACTIONS_SQL.resumeWorkType, [workType]);
        await audit(tx, action, paused ? "bot.pause" : "bot.resume", { workType });
      });
    },

    async retryWorkItem(workItemId, { batchMaxItems }, action) {
      return db.transaction<OperatorItemOutcome>(async (tx) => {
        const current = await tx.one<WorkItemRow>(OPERATOR_READS_SQL.findWorkItem, [workItemId]);
        if (!current) return { kind: "notFound" };
        if (current.status !== "Failed") return { kind: "conflict", item: toOperatorWorkItemView(current) };
        const companyId = Number(current.company_id);
        const retried = await retryOne(tx, companyId, workItemId, current.work_type, batchMaxItems, action);
        return retried ? { kind: "done", item: toOperatorWorkItemView(retried) } : { kind: "conflict", item: toOperatorWorkItemView(current) };
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
        const current = await tx.one<WorkItemRow>(OPERATOR_READS_SQL.findWorkItem, [workItemId]);
        if (!current) return { kind: "notFound" };
        const companyId = Number(current.company_id);
        const batch = await tx.one<{ status: string }>(WORK_ITEMS_SQL.lockItemBatch, [companyId, workItemId]);
        const cancelled =
          batch?.status === "Open"
            ? await transition(tx, WORK_ITEMS_SQL.cancelWorkItem, [companyId, workItemId, action.at], {
                companyId,
                now: action.at,
                from: "New",
                history: [
                  { kind: "operator", detail: "Cancel", action },
                  { kind: "status", status: "Cancelled", detail: "Cancelled by an operator" },
                ],
              })
            : undefined;
        if (!cancelled) return { kind: "conflict", item: toOperatorWorkItemView(current) };
        await audit(tx, action, "workitem.cancel", { companyId, workItemId, workType: current.work_type });
        return { kind: "done", item: toOperatorWorkItemView(cancelled) };
      });
    },

    operatorRedeliverWebhook(deliveryId, action) {
      return db.transaction(async (tx) => {
        const delivery = await tx.one<{ company_id: Id }>(OPERATOR_ACTIONS_SQL.findDeliveryCompany, [deliveryId]);
        if (!delivery) return false;
        const companyId = Number(delivery.company_id);
        if ((await tx.run(WEBHOOKS_SQL.redeliverWebhook, [companyId, deliveryId, action.at])) !== 1) return false;
        await audit(tx, action, "delivery.redeliver", { companyId, deliveryId });
        return true;
      });
    },

    operatorStopWebhookDelivery(deliveryId, action) {
      return db.transaction(async (tx) => {
        const delivery = await tx.one<{ company_id: Id }>(OPERATOR_ACTIONS_SQL.findDeliveryCompany, [deliveryId]);
        if (!delivery) return "notFound";
        const companyId = Number(delivery.company_id);
        if ((await tx.run(OPERATOR_ACTIONS_SQL.stopWebhookDelivery, [companyId, deliveryId, action.at, `Stopped by ${action.operator.email}: ${action.reason}`])) !== 1) return "notPending";
        await audit(tx, action, "delivery.stop", { companyId, deliveryId });
        return "stopped";
      });
    },
  };
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
