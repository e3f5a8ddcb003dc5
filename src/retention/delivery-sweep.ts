/**
 * Deletes webhook deliveries, with their attempts, 30 days after they ended (delivered or given
 * up; SPEC §13), bounded per pass: at most `maxRows` deliveries, company by company like every
 * other sweep, in short statements (sweep.ts).
 * A delivery still pending (or redelivered) has no end and is kept.
 */
import type { Store } from "../store/store.ts";
import { sweepCompanyByCompany } from "./sweep.ts";

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
  return sweepCompanyByCompany(
    {
      companies: (limit) => store.companiesWithEndedDeliveries({ endedBefore, limit }),
      deleteSome: (companyId, limit) => store.deleteEndedDeliveries({ companyId, endedBefore, limit }),
    },
    { maxRows: input.maxRows, chunkRows: input.chunkRows ?? 100 },
  );
}
