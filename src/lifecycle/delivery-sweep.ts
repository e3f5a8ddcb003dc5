/**
 * Deletes webhook deliveries, with their attempts, 30 days after they ended (delivered or given
 * up; SPEC §13), bounded per pass: at most `maxRows` deliveries, company by company like every
 * other sweep (docs/scaling.md), in statements of at most `chunkRows` each, so that no statement
 * holds the SQLite write lock, which intake waits on, for more than a few milliseconds.
 * A delivery still pending (or redelivered) has no end and is kept.
 */
import type { Store } from "../store/store.ts";

/** How long an ended delivery and its attempts stay listed (SPEC §13). */
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 60 * 60;

export interface DeliverySweepInput {
  now: Date;
  /** Most deliveries one pass deletes. */
  maxRows: number;
  /** Most deliveries one statement deletes; default 100. */
  chunkRows?: number;
  retentionSeconds?: number;
}

/** One pass; resolves to the number of deliveries deleted. */
export async function sweepEndedDeliveries(store: Store, input: DeliverySweepInput): Promise<number> {
  const endedBefore = new Date(input.now.getTime() - (input.retentionSeconds ?? DELIVERY_RETENTION_SECONDS) * 1000).toISOString();
  const chunk = input.chunkRows ?? 100;
  let deleted = 0;
  for (const companyId of await store.companiesWithEndedDeliveries({ endedBefore, limit: input.maxRows })) {
    for (;;) {
      const limit = Math.min(chunk, input.maxRows - deleted);
      if (limit <= 0) return deleted;
      const count = await store.deleteEndedDeliveries({ companyId, endedBefore, limit });
      deleted += count;
      if (count < limit) break;
    }
  }
  return deleted;
}
