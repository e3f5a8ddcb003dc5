/**
 * Webhooks in the store (SPEC §6, §11.3): the outbox (the dispatcher's sweep company by company,
 * each attempt with its own row, the integrator's list and redelivery, the retention sweep, SPEC
 * §13), and each company's signing secrets as the store keeps them: opaque text, the current one
 * and the previous one during a rotation's overlap (their encryption is src/webhooks/secrets.ts's).
 */
import type { DatabasePort, Statement } from "../port.ts";
import { isoOrNull, toWebhookDelivery, toWebhookDeliveryRecords, type DeliveryAttemptRow, type OutboxRow } from "../rows.ts";
import type { ListWebhookDeliveriesQuery, Store, WebhookDelivery, WebhookDeliveryStatus } from "../store.ts";
import { WEBHOOKS_SQL } from "./sql-webhooks.ts";

type WebhookPart = Pick<
  Store,
  | "companiesWithDueDeliveries"
  | "claimWebhookDeliveries"
  | "claimDueWebhookDeliveries"
  | "recordWebhookAttempt"
  | "countPendingWebhookDeliveries"
  | "listWebhookDeliveries"
  | "redeliverWebhook"
  | "companiesWithEndedDeliveries"
  | "deleteEndedDeliveries"
>;

const STATUS = { delivered: "Delivered", retried: "Pending", failed: "Failed" } as const;

export function webhooksStore(db: DatabasePort): WebhookPart {
  const companiesWithDueDeliveries: Store["companiesWithDueDeliveries"] = async ({ now, limit, maxInFlight }) =>
    (await db.all<{ company_id: number | string }>(WEBHOOKS_SQL.companiesWithDueDeliveries, [now, limit, maxInFlight])).map((row) => Number(row.company_id));
  const claimWebhookDeliveries: Store["claimWebhookDeliveries"] = async ({ companyId, owner, now, leaseExpiresAt, limit, maxInFlight }) =>
    (await db.all<OutboxRow>(WEBHOOKS_SQL.claimWebhookDeliveries, [companyId, owner, now, leaseExpiresAt, limit, maxInFlight])).map(toWebhookDelivery);

  return {
    companiesWithDueDeliveries,
    claimWebhookDeliveries,

    async claimDueWebhookDeliveries(input) {
      const companies = await companiesWithDueDeliveries(input);
      const claimed: WebhookDelivery[] = [];
      // Each company in turn gets an even share of what is left, so the first cannot fill the claim.
      for (const [index, companyId] of companies.entries()) {
        const left = input.limit - claimed.length;
        if (left <= 0) break;
        const share = Math.ceil(left / (companies.length - index));
        claimed.push(...(await claimWebhookDeliveries({ ...input, companyId, limit: share })));
      }
      return claimed;
    },

    recordWebhookAttempt(delivery, owner, outcome, attempt) {
      const endedAt = new Date(Date.parse(attempt.at) + attempt.durationMs).toISOString();
      const error = outcome.kind === "delivered" ? null : outcome.error;
      return db.transaction(async (tx) => {
        const recorded = await tx.one<{ attempts: number }>(WEBHOOKS_SQL.recordWebhookAttempt, [
          delivery.companyId,
          delivery.deliveryId,
          owner,
          STATUS[outcome.kind],
          outcome.kind === "retried" ? outcome.nextAttemptAt : null,
          outcome.httpStatus,
          error,
          outcome.kind === "delivered" ? endedAt : null,
          outcome.kind === "retried" ? null : endedAt,
        ]);
        if (!recorded) return false;
        await tx.run(WEBHOOKS_SQL.insertWebhookAttempt, [
          delivery.companyId,
          delivery.deliveryId,
          Number(recorded.attempts),
          attempt.at,
          outcome.httpStatus,
          error,
          Math.max(0, Math.round(attempt.durationMs)),
        ]);
        return true;
      });
    },

    async countPendingWebhookDeliveries() {
      const rows = await db.all<{ pending: number | string }>(WEBHOOKS_SQL.pendingDeliveriesByCompany);
      return rows.reduce((sum, row) => sum + Number(row.pending), 0);
    },

    async listWebhookDeliveries(companyId, query) {
      const { statement, values } = listDeliveriesStatement(companyId, query);
      return toWebhookDeliveryRecords(await db.all<DeliveryAttemptRow>(statement, values));
    },

    async redeliverWebhook(companyId, deliveryId, now) {
      return (await db.run(WEBHOOKS_SQL.redeliverWebhook, [companyId, deliveryId, now])) === 1;
    },

    async companiesWithEndedDeliveries({ endedBefore, limit }) {
      const rows = await db.all<{ company_id: number | string }>(WEBHOOKS_SQL.companiesWithEndedDeliveries, [endedBefore, limit]);
      return rows.map((row) => Number(row.company_id));
    },

    deleteEndedDeliveries({ companyId, endedBefore, limit }) {
      return db.run(WEBHOOKS_SQL.deleteEndedDeliveries, [companyId, endedBefore, limit]);
    },
  };
}

const OUTBOX_STATUS: Record<WebhookDeliveryStatus, string> = { pending: "Pending", delivered: "Delivered", failed: "Failed" };

const FILTERS = [
  ["status", "status"],
  ["workItemId", "work_item_id"],
  ["deliveryId", "delivery_id"],
] as const;

const listStatements = new Map<string, Statement>();

/**
 * The Deliveries page: one statement per combination of filters (each a plain equality, the
 * cursor a plain range, served by a (company_id, <filter>, delivery_id) index), the page picked
 * first and its attempts joined to it, ordered so the rows fold into deliveries in one pass.
 * Without a company (operators only, SPEC §12.2) it pages over every company's deliveries.
 */
export function listDeliveriesStatement(companyId: number | undefined, query: ListWebhookDeliveriesQuery): { statement: Statement; values: unknown[] } {
  const used = FILTERS.filter(([field]) => query[field] !== undefined);
  const values: unknown[] = [
    companyId ?? 0,
    query.beforeDeliveryId ?? Number.MAX_SAFE_INTEGER,
    query.limit,
    ...used.map(([field]) => (field === "status" ? OUTBOX_STATUS[query.status!] : query[field])),
  ];
  const key = `${companyId === undefined ? "all_" : ""}${used.map(([, column]) => column).join("_")}`;
  let statement = listStatements.get(key);
  if (!statement) {
    // Without a company, $1 is still bound (to 0) so the other placeholders keep their numbers.
    const company = companyId === undefined ? "$1 = 0" : "company_id = $1";
    const conditions = used.map(([, column], index) => ` AND ${column} = $${index + 4}`).join("");
    statement = {
      name: `list_webhook_deliveries${key ? `_${key}` : ""}`,
      text: `SELECT d.company_id, d.delivery_id, d.event_id, d.work_item_id, d.event_type, d.url, d.status, d.next_attempt_at, d.created_at,
                    a.attempt, a.at, a.status_code, a.error, a.duration_ms
               FROM (SELECT company_id, delivery_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at
                       FROM webhook_outbox
                      WHERE ${company}${conditions} AND delivery_id < $2
                      ORDER BY delivery_id DESC LIMIT $3) d
               LEFT JOIN webhook_delivery_attempts a ON a.company_id = d.company_id AND a.delivery_id = d.delivery_id
              ORDER BY d.delivery_id DESC, a.attempt`,
    };
    listStatements.set(key, statement);
  }
  return { statement, values };
}

/** The signing secrets, kept on the company's row: the current one, and the previous one while a rotation overlaps. */
type WebhookSecretPart = Pick<
  Store,
  "getWebhookSecrets" | "ensureWebhookSecret" | "rotateWebhookSecret" | "revokePreviousWebhookSecret" | "plaintextWebhookSecrets" | "replaceStoredWebhookSecrets"
>;

interface SecretsRow {
  webhook_secret: string | null;
  webhook_secret_previous: string | null;
  webhook_secret_previous_until: string | Date | null;
}

export function webhookSecretsStore(db: DatabasePort): WebhookSecretPart {
  return {
    async getWebhookSecrets(companyId) {
      const row = await db.one<SecretsRow>(WEBHOOKS_SQL.getWebhookSecrets, [companyId]);
      return row && { current: row.webhook_secret, previous: row.webhook_secret_previous, previousUntil: isoOrNull(row.webhook_secret_previous_until) };
    },

    async ensureWebhookSecret(companyId, candidate) {
      return (await db.one<{ webhook_secret: string }>(WEBHOOKS_SQL.ensureWebhookSecret, [companyId, candidate]))?.webhook_secret;
    },

    rotateWebhookSecret(companyId, { secret, previousUntil }) {
      return db.transaction(async (tx) => {
        const row = await tx.one<{ webhook_secret: string | null }>(WEBHOOKS_SQL.lockWebhookSecrets, [companyId]);
        if (!row) return false;
        const previous = previousUntil === null ? null : row.webhook_secret;
        await tx.run(WEBHOOKS_SQL.setWebhookSecrets, [companyId, secret, previous, previous === null ? null : previousUntil]);
        return true;
      });
    },

    async revokePreviousWebhookSecret(companyId) {
      return (await db.run(WEBHOOKS_SQL.revokePreviousWebhookSecret, [companyId])) === 1;
    },

    async plaintextWebhookSecrets({ afterCompanyId, limit }) {
      const rows = await db.all<SecretsRow & { company_id: number | string }>(WEBHOOKS_SQL.plaintextWebhookSecrets, [afterCompanyId, limit]);
      return rows.map((row) => ({ companyId: Number(row.company_id), current: row.webhook_secret, previous: row.webhook_secret_previous }));
    },

    async replaceStoredWebhookSecrets(companyId, { current, previous }) {
      await db.run(WEBHOOKS_SQL.replaceStoredWebhookSecrets, [companyId, current?.from ?? null, current?.to ?? null, previous?.from ?? null, previous?.to ?? null]);
    },
  };
}
