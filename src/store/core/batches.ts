/**
 * The one owner of a batch's status (SPEC §3, §5): every statement that opens, closes, takes up or
 * completes a company's batch (sql-batches.ts), and the one way to find the Open batch an item
 * goes into.
 *
 *   Open ──(the bot takes it up, non-empty)──▶ Closed ──▶ Processing ──(its last item ends)──▶ Completed
 *     └──(full: BATCH_MAX_ITEMS)──▶ Closed                 └──(nothing left to file)──▶ Completed
 */
import type { Queryable } from "../port.ts";
import { BATCHES_SQL } from "./sql-batches.ts";

/**
 * The company's Open batch of `workType`, locked, with room for one more item: a full one is
 * closed and the next opened, as intake does. The caller counts its item in (`countIntoBatch`).
 */
export async function openBatchFor(tx: Queryable, input: { companyId: number; workType: string; now: string; batchMaxItems: number }): Promise<number> {
  const { companyId, workType, now } = input;
  for (;;) {
    const open = await tx.one<{ work_batch_id: number | string; item_count: number | string }>(BATCHES_SQL.holdOpenBatch, [companyId, workType]);
    if (open && Number(open.item_count) < input.batchMaxItems) return Number(open.work_batch_id);
    if (open) await tx.run(BATCHES_SQL.closeBatch, [companyId, open.work_batch_id, now]);
    // Another transaction may open one first: the one-Open-batch index turns ours into nothing, and we look again.
    await tx.run(BATCHES_SQL.insertOpenBatch, [companyId, workType, now]);
  }
}

export const countIntoBatch = (tx: Queryable, companyId: number, workBatchId: number | string) => tx.run(BATCHES_SQL.countIntoBatch, [companyId, workBatchId]);
