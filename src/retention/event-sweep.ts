/**
 * Deletes events older than EVENT_RETENTION_DAYS from the feed (SPEC §11.2, §13), bounded per
 * pass and in short statements (sweep.ts). The feed's positions go on from where they were, so
 * a reader's cursor stays good across a sweep; only events it had not read in time are gone.
 */
import type { Store } from "../store/store.ts";
import { sweepCompanyByCompany } from "./sweep.ts";

/**
 * Rows one statement deletes: on SQLite each statement holds the one write lock that intake
 * also takes. An event row carries its item's view and four index entries; 100 of them take a
 * few milliseconds with the commit's fsync, 500 took tens (`npm run bench:events`,
 * docs/performance.md).
 */
export const EVENT_SWEEP_CHUNK_ROWS = 100;

export interface EventSweepInput {
  now: Date;
  retentionDays: number;
  /** Most rows one pass deletes. */
  maxRows: number;
  chunkRows?: number;
}

/** One pass; resolves to the number of events deleted. */
export async function sweepExpiredEvents(store: Store, input: EventSweepInput): Promise<number> {
  const createdBefore = new Date(input.now.getTime() - input.retentionDays * 86_400_000).toISOString();
  return sweepCompanyByCompany(
    {
      companies: (limit) => store.companiesWithExpiredEvents({ createdBefore, limit }),
      deleteSome: (companyId, limit) => store.deleteExpiredEvents({ companyId, createdBefore, limit }),
    },
    { maxRows: input.maxRows, chunkRows: input.chunkRows ?? EVENT_SWEEP_CHUNK_ROWS },
  );
}
