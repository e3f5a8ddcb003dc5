/** The store's side of the circuit breaker in front of each authority (SPEC §10), shared by every process. */

/** The shared circuit breaker in front of an authority (SPEC §10). */
export interface AuthorityBreaker {
  state: "closed" | "open" | "halfOpen";
  /** open: when one probe may go; halfOpen: when the probe's turn ends. */
  until: string | null;
  /**
   * Why it opened when the authority refused our calls themselves (a wrong AUTHORITY_URL or
   * revoked credentials: 401, 403, 404, 405); null when it opened for failures in a row, or is closed.
   */
  reason: string | null;
}

/** The shared circuit breaker in front of each authority (not tenant data). */
export interface BreakerStore {
  /** The breaker's state; `closed` when it never opened. */
  getAuthorityBreaker(authority: string): Promise<AuthorityBreaker>;
  /** → open until `until` (one probe may go then), with the `reason` when the authority refused the call itself. */
  openAuthorityBreaker(authority: string, input: { until: string; now: string; reason?: string | null }): Promise<void>;
  /**
   * open with `until` passed, or halfOpen with its probe's turn over → halfOpen held by `owner`
   * until `until`. True only for the one caller that gets to probe.
   */
  claimAuthorityBreakerProbe(authority: string, input: { owner: string; until: string; now: string }): Promise<boolean>;
  /** → closed. */
  closeAuthorityBreaker(authority: string, now: string): Promise<void>;
}
