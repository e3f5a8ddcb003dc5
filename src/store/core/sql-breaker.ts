/**
 * The statements of the circuit breaker in front of each authority (SPEC §10), written once for
 * both backends (see ../port.ts). Not tenant data: one breaker guards the authority for every
 * company, shared by every process.
 */
import { statement } from "../port.ts";

export const BREAKER_SQL = {
  getAuthorityBreaker: statement("get_authority_breaker", "SELECT state, until, reason FROM authority_breakers WHERE authority = $1"),
  openAuthorityBreaker: statement(
    "open_authority_breaker",
    `INSERT INTO authority_breakers (authority, state, until, probe_owner, updated_at, reason) VALUES ($1, 'open', $2, NULL, $3, $4)
     ON CONFLICT (authority) DO UPDATE SET state = 'open', until = excluded.until, probe_owner = NULL, updated_at = excluded.updated_at, reason = excluded.reason`,
  ),
  claimAuthorityBreakerProbe: statement(
    "claim_authority_breaker_probe",
    `UPDATE authority_breakers SET state = 'halfOpen', until = $3, probe_owner = $2, updated_at = $4
      WHERE authority = $1 AND state IN ('open', 'halfOpen') AND until <= $4`,
  ),
  closeAuthorityBreaker: statement(
    "close_authority_breaker",
    "UPDATE authority_breakers SET state = 'closed', until = NULL, probe_owner = NULL, reason = NULL, updated_at = $2 WHERE authority = $1 AND state <> 'closed'",
  ),
} as const;
