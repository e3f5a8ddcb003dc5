/**
 * Erases work items that reached a final status more than ITEM_RETENTION_DAYS ago (SPEC §22),
 * each with everything that hangs on it (store/core/erasure.ts), company by company like every
 * other sweep, in short transactions of a few items (sweep.ts), at most `maxRows` items a pass,
 * each followed by a bounded hand-back of the pages it freed and a pause for intake
 * (after-erasing-step.ts).
 * Unfinished items are never erased, nor a create whose follow-ups finished later or not at all.
 */
import type { Store } from "../store/store.ts";
import { afterErasingStep } from "./after-erasing-step.ts";
import { IDEMPOTENCY_RETENTION_SECONDS } from "./idempotency-sweep.ts";
import { sweepCompanyByCompany } from "./sweep.ts";

/**
 * Items (with their follow-ups) one transaction erases: on SQLite each holds the one write lock
 * that intake also takes. An item takes its history, events and outbox rows with it, about ten
 * rows and their index entries; 50 of them hold the lock a few milliseconds (docs/performance.md).
 */
export const ITEM_SWEEP_CHUNK_ITEMS = 50;
/**
 * On a single-writer store (SQLite), fewer: at 50 a step held the lock some 25 ms, and adds' p99
 * rose 2.5× while the sweep ran (bench:erasure, 200,000 items); intake waits at most one step.
 */
export const ITEM_SWEEP_CHUNK_ITEMS_SINGLE_WRITER = 20;

export interface ItemSweepInput {
  now: Date;
  retentionDays: number;
  /** Most items one pass erases. */
  maxRows: number;
  chunkRows?: number;
}

/** One pass; resolves to the number of items erased. */
export async function sweepExpiredItems(store: Store, input: ItemSweepInput): Promise<number> {
  const finishedBefore = new Date(input.now.getTime() - input.retentionDays * 86_400_000).toISOString();
  const keysSince = new Date(input.now.getTime() - IDEMPOTENCY_RETENTION_SECONDS * 1000).toISOString();
  return sweepCompanyByCompany(
    {
      companies: (limit) => store.companiesWithExpiredItems({ finishedBefore, limit }),
      async deleteSome(companyId, limit) {
        const startedAt = performance.now();
        const erased = await store.eraseExpiredItems({ companyId, finishedBefore, keysSince, limit });
        await afterErasingStep(store, erased, startedAt);
        return erased;
      },
    },
    { maxRows: input.maxRows, chunkRows: input.chunkRows ?? (store.flags.singleWriter ? ITEM_SWEEP_CHUNK_ITEMS_SINGLE_WRITER : ITEM_SWEEP_CHUNK_ITEMS) },
  );
}
