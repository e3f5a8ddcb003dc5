/** The store's side of the authority's capacity (SPEC §14): its slots, shared by every process. */
import type { CallKind } from "../../scheduler/capacity.ts";

/** What a call for an authority slot got (see src/scheduler/capacity.ts). */
export type SlotGrant =
  /** Slot `slot` is held until the call ends; send the call at `sendAtMs` (the rate limit), not before. */
  | { kind: "granted"; slot: number; sendAtMs: number }
  /** Every slot this kind may hold is taken: ask again soon. */
  | { kind: "wait" }
  /** The shared breaker is open (and this is not its probe): no call. */
  | { kind: "breakerOpen" };

export interface SlotRequest {
  /** Unique per call: who releases the slot. */
  holder: string;
  kind: CallKind;
  nowMs: number;
  /** The breaker's probe may go while the breaker is not closed. */
  probe: boolean;
  maxConcurrency: number;
  maxRps: number;
  /** How long a slot is held at most past its send time: a holder that died frees it then. */
  holdMs: number;
}

export interface SlotHandOver {
  slot: number;
  from: string;
  to: string;
  kind: CallKind;
  nowMs: number;
  holdMs: number;
  /** A slot about to run out is not handed over: another process may take it as free. */
  marginMs: number;
  maxConcurrency: number;
}

/** The authority's capacity, shared by every process (SPEC §14; not tenant data). */
export interface CapacityStore {
  /**
   * In one transaction over every process: whether a call may take a slot now (capacity,
   * the share of its kind, the breaker), and if so the slot and when it may be sent.
   */
  takeAuthoritySlot(authority: string, request: SlotRequest): Promise<SlotGrant>;
  /**
   * In one statement: slot `slot`, held by `from` for a call of `kind` that just ended, goes to
   * `to` for the next call of that kind, held for `holdMs` from `nowMs`. Only while `from` still
   * holds it (for at least `marginMs` more), the breaker is closed, and `mayHandOver`
   * (src/scheduler/capacity.ts) allows it. False, changing nothing, otherwise: then release it,
   * and `to` asks with `takeAuthoritySlot`.
   */
  handOverAuthoritySlot(authority: string, handOver: SlotHandOver): Promise<boolean>;
  /**
   * Keeps slot `slot` taken by `holder` until `heldUntilMs` (a call that timed out while its
   * connection stays open, SPEC §20); nothing when it is no longer the holder.
   */
  holdAuthoritySlot(authority: string, slot: number, holder: string, heldUntilMs: number): Promise<void>;
  /** Frees a slot `holder` took; nothing when it is no longer the holder. */
  releaseAuthoritySlot(authority: string, slot: number, holder: string): Promise<void>;

}
