/**
 * Deletes idempotency keys past their retention (SPEC §4, §11.5), bounded per pass: at most
 * `maxRows` rows, company by company like every other sweep (docs/scaling.md), so a backlog
 * never makes one pass long. Intake ignores an expired key anyway; this keeps the table small.
 */
import type { Store } from "../store/store.ts";

/** How long an Idempotency-Key replays its first answer (SPEC §4). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;

export interface IdempotencySweepInput {
  now: Date;
  /** Most rows one pass deletes. */
  maxRows: number;
  retentionSeconds?: number;
}

/** One pass; resolves to the number of keys deleted. */
export async function sweepExpiredIdempotencyKeys(store: Store, input: IdempotencySweepInput): Promise<number> {
  const createdBefore = new Date(input.now.getTime() - (input.retentionSeconds ?? IDEMPOTENCY_RETENTION_SECONDS) * 1000).toISOString();
  let deleted = 0;
  for (const companyId of await store.companiesWithExpiredIdempotencyKeys({ createdBefore, limit: input.maxRows })) {
    if (deleted >= input.maxRows) break;
    deleted += await store.deleteExpiredIdempotencyKeys({ companyId, createdBefore, limit: input.maxRows - deleted });
  }
  return deleted;
}
