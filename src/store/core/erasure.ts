/**
 * Erasing work items (SPEC §22): the item sweep's steps, each one transaction over a few items,
 * and what every erase shares: the ids it deletes never come back.
 *
 * What goes with an item: its changes and withdrawals (a family goes whole, or stays whole), its
 * history, its events, its outbox rows and their attempts, the idempotency keys that name it; its
 * batch counts it no more, and goes with its last item unless it is still Open (intake appends
 * to that one). The company's counts of items per state go down with it. Audit entries stay:
 * they hold ids only.
 */
import type { DatabasePort, Queryable, RetiredIdTable } from "../port.ts";
import { iso, type Timestamp } from "../rows.ts";
import type { Store, StoreFlags } from "../store.ts";
import { ERASURE_SQL } from "./sql-erasure.ts";
import { TRANSITION_SQL } from "./sql-transition.ts";

type ErasurePart = Pick<Store, "companiesWithExpiredItems" | "eraseExpiredItems">;

type Id = number | string;

/** An item about to go, as a step read it. */
export interface ErasedItem {
  work_item_id: Id;
  status: string;
  work_batch_id: Id;
  created_at: Timestamp;
}

/**
 * On a store that gives deleted ids again (StoreFlags.reusesIds), records the largest id of each
 * table that is about to be deleted, in the transaction that deletes it.
 */
export async function retireIds(tx: Queryable, flags: StoreFlags, largest: Partial<Record<RetiredIdTable, Id | null>>): Promise<void> {
  if (!flags.reusesIds) return;
  for (const [table, id] of Object.entries(largest)) {
    if (id !== null && id !== undefined) await tx.run(ERASURE_SQL.retireIds, [table, Number(id)]);
  }
}

/**
 * Deletes `items` of the company with everything that hangs on them, and keeps the counts right:
 * the rows that name the items first, then the items, then their batches' counts and the
 * batches left empty, and last the company's counts per state.
 */
export async function eraseItems(tx: Queryable, flags: StoreFlags, companyId: number, items: ErasedItem[], keysSince: string): Promise<void> {
  if (items.length === 0) return;
  const ids = JSON.stringify(items.map((item) => Number(item.work_item_id)));
  if (flags.reusesIds) {
    const delivery = await tx.one<{ id: Id | null }>(ERASURE_SQL.largestDeliveryOf, [companyId, ids]);
    await retireIds(tx, flags, {
      work_items: Math.max(...items.map((item) => Number(item.work_item_id))),
      work_batches: Math.max(...items.map((item) => Number(item.work_batch_id))),
      webhook_outbox: delivery?.id ?? null,
    });
  }
  await tx.run(ERASURE_SQL.deleteOutboxRows, [companyId, ids]);
  await tx.run(ERASURE_SQL.deleteEvents, [companyId, ids]);
  await tx.run(ERASURE_SQL.deleteHistory, [companyId, ids]);
  // Only an item added since `keysSince` can still have an idempotency key that has not expired.
  const keysAfter = Date.parse(keysSince);
  if (items.some((item) => Date.parse(iso(item.created_at)) >= keysAfter)) await tx.run(ERASURE_SQL.deleteIdempotencyKeys, [companyId, ids]);
  await tx.run(ERASURE_SQL.deleteItems, [companyId, ids]);
  const perBatch = tally(items, (item) => String(item.work_batch_id));
  for (const [workBatchId, count] of perBatch) {
    await tx.run(ERASURE_SQL.uncountFromBatch, [companyId, workBatchId, count]);
    await tx.run(ERASURE_SQL.deleteEmptyBatch, [companyId, workBatchId]);
  }
  // New and InProgress are not counted (core/transition.ts); only finished items are erased here, but an erase of a company takes every item.
  for (const [status, count] of tally(items, (item) => item.status)) {
    if (status !== "New" && status !== "InProgress") await tx.run(TRANSITION_SQL.countItems, [companyId, status, -count]);
  }
}

function tally<T>(items: T[], key: (item: T) => string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  // In key order, so two steps lock batches and counters in the same order.
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function erasureStore(db: DatabasePort, flags: StoreFlags): ErasurePart {
  return {
    async companiesWithExpiredItems({ finishedBefore, limit }) {
      return (await db.all<{ company_id: Id }>(ERASURE_SQL.companiesWithExpiredItems, [finishedBefore, limit])).map((row) => Number(row.company_id));
    },

    eraseExpiredItems({ companyId, finishedBefore, keysSince, limit }) {
      return db.transaction(async (tx) => {
        const originals = await tx.all<ErasedItem>(ERASURE_SQL.expiredOriginals, [companyId, finishedBefore, limit]);
        if (originals.length === 0) return 0;
        const followUps = await tx.all<ErasedItem & { original_work_item_id: Id; completed_at: Timestamp | null }>(ERASURE_SQL.followUpsOf, [
          companyId,
          JSON.stringify(originals.map((item) => Number(item.work_item_id))),
        ]);
        // Read again under their locks: a follow-up retried or added since the first read keeps its whole family.
        const cutoff = Date.parse(finishedBefore);
        const kept = new Set(followUps.filter((f) => f.completed_at === null || Date.parse(iso(f.completed_at)) > cutoff).map((f) => String(f.original_work_item_id)));
        const items = [
          ...originals.filter((item) => !kept.has(String(item.work_item_id))),
          ...followUps.filter((item) => !kept.has(String(item.original_work_item_id))),
        ];
        await eraseItems(tx, flags, companyId, items, keysSince);
        return items.length;
      });
    },
  };
}
