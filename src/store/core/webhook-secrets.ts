/**
 * Webhook signing secrets as the store keeps them (SPEC §6, §11.3): opaque text, the current
 * one and the previous one during a rotation's overlap. Encryption is src/webhooks/secrets.ts's.
 */
import type { DatabasePort } from "../port.ts";
import { isoOrNull } from "../rows.ts";
import type { Store } from "../store.ts";
import { SQL } from "./sql.ts";

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
      const row = await db.one<SecretsRow>(SQL.getWebhookSecrets, [companyId]);
      return row && { current: row.webhook_secret, previous: row.webhook_secret_previous, previousUntil: isoOrNull(row.webhook_secret_previous_until) };
    },

    async ensureWebhookSecret(companyId, candidate) {
      return (await db.one<{ webhook_secret: string }>(SQL.ensureWebhookSecret, [companyId, candidate]))?.webhook_secret;
    },

    rotateWebhookSecret(companyId, { secret, previousUntil }) {
      return db.transaction(async (tx) => {
        const row = await tx.one<{ webhook_secret: string | null }>(SQL.lockWebhookSecrets, [companyId]);
        if (!row) return false;
        const previous = previousUntil === null ? null : row.webhook_secret;
        await tx.run(SQL.setWebhookSecrets, [companyId, secret, previous, previous === null ? null : previousUntil]);
        return true;
      });
    },

    async revokePreviousWebhookSecret(companyId) {
      return (await db.run(SQL.revokePreviousWebhookSecret, [companyId])) === 1;
    },

    async plaintextWebhookSecrets({ afterCompanyId, limit }) {
      const rows = await db.all<SecretsRow & { company_id: number | string }>(SQL.plaintextWebhookSecrets, [afterCompanyId, limit]);
      return rows.map((row) => ({ companyId: Number(row.company_id), current: row.webhook_secret, previous: row.webhook_secret_previous }));
    },

    async replaceStoredWebhookSecrets(companyId, { current, previous }) {
      await db.run(SQL.replaceStoredWebhookSecrets, [companyId, current?.from ?? null, current?.to ?? null, previous?.from ?? null, previous?.to ?? null]);
    },
  };
}
