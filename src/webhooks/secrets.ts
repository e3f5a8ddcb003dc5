/**
 * A company's webhook signing secret (Standard Webhooks `whsec_` + 32 random bytes). It is
 * stored as it is, because signing needs the key itself. It is made on first use, by the
 * first delivery or by `webhooks secret` on the CLI, whichever comes first; concurrent first
 * uses agree because the store keeps the first secret it is given.
 */
import { randomBytes } from "node:crypto";
import type { Store } from "../store/store.ts";

export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/** The company's secret, made now when it has none; undefined when there is no such company. */
export async function webhookSecret(store: Store, companyId: number): Promise<string | undefined> {
  return (await store.getWebhookSecret(companyId)) ?? (await store.ensureWebhookSecret(companyId, newWebhookSecret()));
}

/**
 * Replaces the company's secret; deliveries signed from now on use the new one, so receivers
 * must be given it first. Undefined when there is no such company.
 */
export async function rotateWebhookSecret(store: Store, companyId: number): Promise<string | undefined> {
  if (!(await store.getCompany(companyId))) return undefined;
  const secret = newWebhookSecret();
  await store.setWebhookSecret(companyId, secret);
  return secret;
}
