/**
 * What every retention sweep shares (SPEC §13): find the companies that hold expired rows, then
 * delete company by company (docs/scaling.md), in statements of at most `chunkRows` rows, at
 * most `maxRows` a pass. Each statement is its own short transaction, so a sweep never holds a
 * lock that intake waits on for longer than one chunk takes (on SQLite every write takes the
 * one write lock), and a backlog never makes one pass long.
 */
export interface CompanySweep {
  /** Up to `limit` companies with expired rows. */
  companies(limit: number): Promise<number[]>;
  /** Deletes up to `limit` of the company's expired rows; resolves to how many. */
  deleteSome(companyId: number, limit: number): Promise<number>;
}

export interface SweepBounds {
  /** Most rows one pass deletes. */
  maxRows: number;
  /** Most rows one statement deletes (default: maxRows). */
  chunkRows?: number;
}

/** One pass; resolves to the number of rows deleted. */
export async function sweepCompanyByCompany(sweep: CompanySweep, { maxRows, chunkRows = maxRows }: SweepBounds): Promise<number> {
  let deleted = 0;
  for (const companyId of await sweep.companies(maxRows)) {
    for (;;) {
      const asked = Math.min(chunkRows, maxRows - deleted);
      if (asked <= 0) return deleted;
      const done = await sweep.deleteSome(companyId, asked);
      deleted += done;
      if (done < asked) break;
    }
  }
  return deleted;
}
