/**
 * The authority's capacity, shared by every worker process (SPEC §14), as pure functions: the
 * store keeps the state (one row of slots per call in flight, and the rate limiter's clock) and
 * calls these inside the transaction that takes a slot.
 *
 * - At most `maxConcurrency` calls in flight, submits and status requests alike. A slot whose
 *   holder died frees itself at its `heldUntilMs` (the call timeout and a little more).
 * - While submits are kept waiting, status requests hold at most half the slots; while status
 *   requests are kept waiting, submits hold at most all but one. Each rule leaves its kind at
 *   least one slot, so with a single slot neither starves the other.
 * - A call that ends may hand its slot to the next call of its kind (`mayHandOver`): one write
 *   instead of a release and a grant, so the slot idles less between calls; while the other
 *   kind waits, only submits do, and never with every slot.
 * - At most `maxRps` calls a second, evenly spaced: a generic cell rate algorithm (GCRA) without
 *   a burst, so no window of one second ever holds more than `maxRps` calls. A granted call gets
 *   the instant it may be sent; the caller waits until then.
 */

export type CallKind = "submit" | "status";

/** A slot row as the store holds it. */
export interface SlotState {
  slot: number;
  holder: string | null;
  kind: CallKind | null;
  heldUntilMs: number;
}

export interface CapacityState {
  slots: readonly SlotState[];
  /** Until when submits (polls) are marked as kept waiting. */
  submitsWaitingUntilMs: number;
  pollsWaitingUntilMs: number;
}

export interface CapacityLimits {
  maxConcurrency: number;
}

/** Whether a slot row is taken at `nowMs`. */
export const isHeld = (slot: SlotState, nowMs: number) => slot.holder !== null && slot.heldUntilMs > nowMs;

/** The most slots `kind` may hold now; the rest are kept for the other kind while it waits. */
export function shareOf(kind: CallKind, state: CapacityState, limits: CapacityLimits, nowMs: number): number {
  const max = limits.maxConcurrency;
  if (!otherKindWaits(kind, state, nowMs)) return max;
  return kind === "status" ? Math.max(1, Math.floor(max / 2)) : Math.max(1, max - 1);
}

const otherKindWaits = (kind: CallKind, state: Pick<CapacityState, "submitsWaitingUntilMs" | "pollsWaitingUntilMs">, nowMs: number) =>
  (kind === "submit" ? state.pollsWaitingUntilMs : state.submitsWaitingUntilMs) > nowMs;

/** The slot a call of `kind` takes now (the lowest free number), or undefined when it must wait. */
export function chooseSlot(kind: CallKind, state: CapacityState, limits: CapacityLimits, nowMs: number): number | undefined {
  const held = state.slots.filter((slot) => slot.slot <= limits.maxConcurrency && isHeld(slot, nowMs));
  if (held.length >= limits.maxConcurrency) return undefined;
  if (held.filter((slot) => slot.kind === kind).length >= shareOf(kind, state, limits, nowMs)) return undefined;
  const taken = new Set(held.map((slot) => slot.slot));
  for (let slot = 1; slot <= limits.maxConcurrency; slot += 1) if (!taken.has(slot)) return slot;
  return undefined;
}

/**
 * Whether a call of `kind` that ends may hand its slot straight to the next call of the same
 * kind, instead of giving it back for `chooseSlot` to grant again. A hand-over changes no count,
 * so the limit and the shares hold as they did. While the other kind is kept waiting:
 * - a status request does not hand on: a deadline is met at submit, so its slot goes back for
 *   the waiting submits to take, as far as their share allows;
 * - a submit hands on unless submits hold every slot (the one it ends with counted), so a poll
 *   kept waiting always gets a slot back, with a single slot too.
 * (With a rate limit every call needs its send time from `reserveSend`, so calls are granted one
 * by one.)
 */
export function mayHandOver(kind: CallKind, state: CapacityState, limits: CapacityLimits, nowMs: number): boolean {
  if (!otherKindWaits(kind, state, nowMs)) return true;
  if (kind === "status") return false;
  const heldOfKind = state.slots.filter((slot) => slot.slot <= limits.maxConcurrency && isHeld(slot, nowMs) && slot.kind === kind).length;
  return heldOfKind < limits.maxConcurrency;
}

/**
 * GCRA: `nextSendMs` is the theoretical arrival time of the next call. Returns when this call
 * may be sent and the new theoretical arrival time. `maxRps` 0 means no limit.
 */
export function reserveSend(nextSendMs: number, nowMs: number, maxRps: number): { sendAtMs: number; nextSendMs: number } {
  if (maxRps <= 0) return { sendAtMs: nowMs, nextSendMs };
  const sendAtMs = Math.max(nextSendMs, nowMs);
  return { sendAtMs: Math.ceil(sendAtMs), nextSendMs: sendAtMs + 1000 / maxRps };
}

/**
 * How long a kept-waiting mark lasts: a waiting caller renews it each time it asks again (at
 * least every 15 ms), so the mark ends soon after the last of its kind stopped waiting, and the
 * other kind's share is not held back for callers that are no longer there.
 */
export const WAITING_MARK_MS = 100;
