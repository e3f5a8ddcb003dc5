/**
 * The shared circuit breaker in front of each authority (SPEC §10): one row per authority, read
 * and changed by every worker process. The policy of when it opens and closes is pure, in
 * src/scheduler/breaker.ts; this is its record.
 */
import type { DatabasePort } from "../port.ts";
import { isoOrNull } from "../rows.ts";
import type { AuthorityBreaker, BreakerStore } from "../store.ts";
import { BREAKER_SQL } from "./sql-breaker.ts";

export function breakerStore(db: DatabasePort): BreakerStore {
  return {
    async getAuthorityBreaker(authority) {
      const row = await db.one<{ state: AuthorityBreaker["state"]; until: string | Date | null; reason: string | null }>(BREAKER_SQL.getAuthorityBreaker, [authority]);
      return row ? { state: row.state, until: isoOrNull(row.until), reason: row.reason } : { state: "closed", until: null, reason: null };
    },

    async openAuthorityBreaker(authority, { until, now, reason = null }) {
      await db.run(BREAKER_SQL.openAuthorityBreaker, [authority, until, now, reason]);
    },

    async claimAuthorityBreakerProbe(authority, { owner, until, now }) {
      return (await db.run(BREAKER_SQL.claimAuthorityBreakerProbe, [authority, owner, until, now])) === 1;
    },

    async closeAuthorityBreaker(authority, now) {
      await db.run(BREAKER_SQL.closeAuthorityBreaker, [authority, now]);
    },
  };
}
