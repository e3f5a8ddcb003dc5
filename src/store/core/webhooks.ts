/** The webhook outbox (SPEC §6): the dispatcher's sweep company by company, and each attempt. */
import type { DatabasePort } from "../port.ts";
import { toWebhookDelivery, type OutboxRow } from "../rows.ts";
import type { Store } from "../store.ts";
import { SQL } from "./sql.ts";

type WebhookOperations = Pick<Store, "companiesWithDueDeliveries" | "claimWebhookDeliveries" | "recordWebhookAttempt" | "countPendingWebhookDeliveries">;

const STATUS = { delivered: "Delivered", retried: "Pending", failed: "Failed" } as const;

export function webhookOperations(db: DatabasePort): WebhookOperations {
  return {
    async companiesWithDueDeliveries({ now, limit }) {
      return (await db.all<{ company_id: number | string }>(SQL.companiesWithDueDeliveries, [now, limit])).map((row) => Number(row.company_id));
    },

    async claimWebhookDeliveries({ companyId, owner, now, leaseExpiresAt, limit }) {
      return (await db.all<OutboxRow>(SQL.claimWebhookDeliveries, [companyId, owner, now, leaseExpiresAt, limit])).map(toWebhookDelivery);
    },

    async recordWebhookAttempt(delivery, owner, outcome, now) {
      const changed = await db.run(SQL.recordWebhookAttempt, [
        delivery.companyId,
        delivery.eventId,
        owner,
        STATUS[outcome.kind],
        outcome.kind === "retried" ? outcome.nextAttemptAt : null,
        outcome.httpStatus,
        outcome.kind === "delivered" ? null : outcome.error,
        outcome.kind === "delivered" ? now : null,
      ]);
      return changed === 1;
    },

    async countPendingWebhookDeliveries() {
      const rows = await db.all<{ pending: number | string }>(SQL.pendingDeliveriesByCompany);
      return rows.reduce((sum, row) => sum + Number(row.pending), 0);
    },
  };
}
