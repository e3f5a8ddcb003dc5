/**
 * The circuit breaker in front of the authority (SPEC §10, §14), as pure functions. The store
 * keeps its state, shared by every process; the gate (src/bot/authority-gate.ts) applies these.
 *
 * After `failures` transient failures in a row the breaker opens for a while; no call leaves
 * while it is open, including calls already waiting for a slot (they look again when they get
 * one). When the while is over, one process wins the probe; its call closes the breaker or opens
 * it again. A call not made spends no attempt.
 */

export type BreakerState = "closed" | "open" | "halfOpen";

export interface BreakerView {
  state: BreakerState;
  /** open: when one probe may go; halfOpen: when the probe's turn ends. */
  until: string | null;
  /** Why it is open when the authority refused our calls themselves (see AuthorityMisconfiguredError); kept while the probe is out. */
  reason?: string | null;
}

/** What a call may do now: go, go as the probe (once won), or not go at all. */
export function admission(breaker: BreakerView, nowMs: number): "go" | "probe" | "wait" {
  if (breaker.state === "closed") return "go";
  return breaker.until !== null && Date.parse(breaker.until) <= nowMs ? "probe" : "wait";
}

/** How a call ended, for the breaker: the authority answered (whatever it said), or it did not. */
export type CallResult = "answered" | "transient";

/**
 * The breaker after one call: the failures in a row this process counts, and whether to open or
 * close the shared breaker.
 */
export function afterCall(
  input: { failuresInARow: number; probe: boolean; state: BreakerState; result: CallResult },
  threshold: number,
): { failuresInARow: number; change: "open" | "close" | "none" } {
  if (input.result === "answered") return { failuresInARow: 0, change: input.probe ? "close" : "none" };
  const failuresInARow = input.failuresInARow + 1;
  if (input.probe) return { failuresInARow: 0, change: "open" };
  if (input.state === "closed" && failuresInARow >= threshold) return { failuresInARow: 0, change: "open" };
  return { failuresInARow, change: "none" };
}
