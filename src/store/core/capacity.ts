/**
 * The authority's capacity, shared by every worker process (SPEC §14): a row of slots per call in
 * flight, and the rate limiter's clock. The policy is pure, in src/scheduler/capacity.ts; here
 * it runs inside the transaction that holds the capacity row, so grants are decided one at a
 * time over every process.
 */
import type { DatabasePort } from "../port.ts";
import type { AuthorityBreaker, CapacityStore } from "../store.ts";
import { chooseSlot, reserveSend, WAITING_MARK_MS, type CallKind, type SlotState } from "../../scheduler/capacity.ts";
import { BREAKER_SQL } from "./sql-breaker.ts";
import { CAPACITY_SQL } from "./sql-capacity.ts";

interface CapacityRow {
  next_send_ms: number | string;
  submits_waiting_until_ms: number | string;
  polls_waiting_until_ms: number | string;
}

interface SlotRow {
  slot: number | string;
  holder: string | null;
  kind: CallKind | null;
  held_until_ms: number | string;
}

export function capacityStore(db: DatabasePort): CapacityStore {
  /** Authorities whose capacity row exists: created once per process. */
  const capacityReady = new Set<string>();

  return {
    async takeAuthoritySlot(authority, request) {
      const { nowMs, kind, maxConcurrency } = request;
      if (!capacityReady.has(authority)) {
        await db.run(CAPACITY_SQL.ensureCapacity, [authority]);
        capacityReady.add(authority);
      }
      return db.transaction(async (tx) => {
        const capacity = (await tx.one<CapacityRow>(CAPACITY_SQL.lockCapacity, [authority]))!;
        const state = {
          slots: (await tx.all<SlotRow>(CAPACITY_SQL.capacitySlots, [authority, maxConcurrency])).map(toSlotState),
          submitsWaitingUntilMs: Number(capacity.submits_waiting_until_ms),
          pollsWaitingUntilMs: Number(capacity.polls_waiting_until_ms),
        };
        const nextSendMs = Number(capacity.next_send_ms);
        if (!request.probe) {
          const breaker = await tx.one<{ state: AuthorityBreaker["state"] }>(BREAKER_SQL.getAuthorityBreaker, [authority]);
          if (breaker && breaker.state !== "closed") return { kind: "breakerOpen" as const };
        }
        const slot = chooseSlot(kind, state, { maxConcurrency }, nowMs);
        if (slot === undefined) {
          // Say that this kind is kept waiting, so the other kind leaves it its share.
          const mark = nowMs + WAITING_MARK_MS;
          if (kind === "submit" && state.submitsWaitingUntilMs < nowMs + WAITING_MARK_MS / 2) state.submitsWaitingUntilMs = mark;
          else if (kind === "status" && state.pollsWaitingUntilMs < nowMs + WAITING_MARK_MS / 2) state.pollsWaitingUntilMs = mark;
          else return { kind: "wait" as const };
          await tx.run(CAPACITY_SQL.setCapacity, [authority, nextSendMs, state.submitsWaitingUntilMs, state.pollsWaitingUntilMs]);
          return { kind: "wait" as const };
        }
        const send = reserveSend(nextSendMs, nowMs, request.maxRps);
        await tx.run(CAPACITY_SQL.takeSlot, [authority, slot, request.holder, kind, send.sendAtMs + request.holdMs]);
        // Without a rate limit the row holds nothing a grant changes.
        if (send.nextSendMs !== nextSendMs) await tx.run(CAPACITY_SQL.setCapacity, [authority, send.nextSendMs, state.submitsWaitingUntilMs, state.pollsWaitingUntilMs]);
        return { kind: "granted" as const, slot, sendAtMs: send.sendAtMs };
      });
    },

    async handOverAuthoritySlot(authority, { slot, from, to, kind, nowMs, holdMs, marginMs, maxConcurrency }) {
      const handed = await db.run(CAPACITY_SQL.handOverSlot, [authority, slot, from, to, kind, nowMs + holdMs, nowMs + marginMs, nowMs, maxConcurrency]);
      return handed === 1;
    },

    async holdAuthoritySlot(authority, slot, holder, heldUntilMs) {
      await db.run(CAPACITY_SQL.holdSlot, [authority, slot, holder, heldUntilMs]);
    },

    async releaseAuthoritySlot(authority, slot, holder) {
      await db.run(CAPACITY_SQL.releaseSlot, [authority, slot, holder]);
    },
  };
}

const toSlotState = (row: SlotRow): SlotState => ({
  slot: Number(row.slot),
  holder: row.holder,
  kind: row.kind,
  heldUntilMs: Number(row.held_until_ms),
});
