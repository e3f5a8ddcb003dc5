/**
 * The store's sweeps as the bot and the dispatcher run them, for tests that drive the store
 * directly: take every company's batches up into the filing queue (a bot pass's first step),
 * claim the whole queue, and claim due deliveries of any company.
 */
import type { DueItem, Store, WebhookDelivery } from "../../src/store/store.ts";

/**
 * A bot pass's first step, company by company: each company's non-empty Open batches closed and,
 * with its Closed ones, taken up into the filing queue (their New items due from `now`).
 * Resolves to how many batches were taken up.
 */
export async function queueAll(store: Store, now: string): Promise<number> {
  let queued = 0;
  for (const { companyId, toQueue } of await store.companiesWithBotWork()) {
    if (toQueue) queued += await store.queueBatches(companyId, now);
  }
  return queued;
}

/** Claims for `owner`, `limit` at a time, until the queue gives nothing more due by `dueBefore`; every item claimed, in claim order. */
export async function claimEverything(store: Store, input: { owner: string; now: string; dueBefore: string; leaseExpiresAt: string; limit?: number }): Promise<DueItem[]> {
  const { limit = 50, ...claim } = input;
  const claimed: DueItem[] = [];
  for (;;) {
    const items = await store.claimFilingWork({ ...claim, limit });
    if (items.length === 0) return claimed;
    claimed.push(...items);
  }
}

export async function claimDueDeliveries(store: Store, input: { owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]> {
  return store.claimDueWebhookDeliveries({ ...input, maxInFlight: Number.MAX_SAFE_INTEGER });
}
