/**
 * Deletes idempotency keys past their retention (SPEC §4, §11.5), bounded per pass: at most
 * `maxRows` rows, company by company like every other sweep (sweep.ts), so a backlog never
 * makes one pass long. Intake ignores an expired key anyway; this keeps the table small.
 */
import type { Store } from "../store/store.ts";
import { sweepCompanyByCompany } from "./sweep.ts";

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
  return sweepCompanyByCompany(
    {
      companies: (limit) => store.companiesWithExpiredIdempotencyKeys({ createdBefore, limit }),
      deleteSome: (companyId, limit) => store.deleteExpiredIdempotencyKeys({ companyId, createdBefore, limit }),
    },
    { maxRows: input.maxRows },
  );
}
