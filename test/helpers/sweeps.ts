/**
 * The store's sweeps as the bot and the dispatcher run them, company by company, for tests that
 * drive the store directly: close every Open batch, claim the next batch or due deliveries of
 * any company.
 */
import type { ClaimedBatch, Store, WebhookDelivery } from "../../src/store/store.ts";

export async function closeOpenBatches(store: Store, now: string): Promise<number> {
  let closed = 0;
  for (const { companyId, openBatch } of await store.companiesWithBotWork({ dueBefore: now })) {
    if (openBatch) closed += await store.closeOpenBatches(companyId, now);
  }
  return closed;
}

export async function claimNextBatch(store: Store, input: { owner: string; dueBefore: string; leaseExpiresAt: string }): Promise<ClaimedBatch | undefined> {
  for (const { companyId } of await store.companiesWithBotWork({ dueBefore: input.dueBefore })) {
    const batch = await store.claimBatch({ companyId, ...input });
    if (batch) return batch;
  }
  return undefined;
}

export async function claimDueDeliveries(store: Store, input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]> {
  const claimed: WebhookDelivery[] = [];
  for (const companyId of await store.companiesWithDueDeliveries({ now: input.now, limit: input.limit })) {
    if (claimed.length >= input.limit) break;
    claimed.push(...(await store.claimWebhookDeliveries({ ...input, companyId, limit: input.limit - claimed.length })));
  }
  return claimed;
}
