/**
 * Erasing work items (SPEC §22): the items past ITEM_RETENTION_DAYS, each with everything that
 * hangs on it, in bounded steps that intake never waits on for long. The ids of what goes never
 * come back (StoreFlags.reusesIds).
 */

/** The item sweep's step (SPEC §22). */
export interface ErasureStore {
  /**
   * Up to `limit` companies holding an item that reached a final status at or before
   * `finishedBefore` (sweep step 1, across companies).
   */
  companiesWithExpiredItems(input: { finishedBefore: string; limit: number }): Promise<number[]>;
  /**
   * In one transaction, erases up to `limit` of the company's creates that reached a final status
   * at or before `finishedBefore`, oldest first, each with its changes and withdrawals, whose own
   * final statuses are at or before it too (a create with a follow-up still open, or finished
   * later, stays): the items, their history, their events, their outbox rows with the attempts,
   * the idempotency keys naming them (looked for only when an item was added at or after
   * `keysSince`, before which every key has expired and is the key sweep's); their batches lose them from their counts, and a batch
   * that is no longer Open goes once its last item has. The company's counts of items per state
   * go down. Resolves to how many items went (the follow-ups included).
   */
  eraseExpiredItems(input: { companyId: number; finishedBefore: string; keysSince: string; limit: number }): Promise<number>;
}
