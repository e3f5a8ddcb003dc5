/**
 * The statements of the authority's capacity, shared by every worker process (SPEC §14): a row of
 * slots per call in flight, and the rate limiter's clock. Written once for both backends (see
 * ../port.ts). Not tenant data: none of them names a company.
 */
import { statement } from "../port.ts";

export const CAPACITY_SQL = {
  /** The authority's capacity row, created once. */
  ensureCapacity: statement(
    "ensure_authority_capacity",
    "INSERT INTO authority_capacity (authority) VALUES ($1) ON CONFLICT (authority) DO NOTHING",
  ),
  /** Holds the capacity row: slot grants are decided one at a time, over every process. */
  lockCapacity: statement(
    "lock_authority_capacity",
    (d) => `SELECT next_send_ms, submits_waiting_until_ms, polls_waiting_until_ms FROM authority_capacity WHERE authority = $1${d.forUpdate}`,
  ),
  capacitySlots: statement(
    "authority_slots",
    "SELECT slot, holder, kind, held_until_ms FROM authority_slots WHERE authority = $1 AND slot <= $2",
  ),
  takeSlot: statement(
    "take_authority_slot",
    `INSERT INTO authority_slots (authority, slot, holder, kind, held_until_ms) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (authority, slot) DO UPDATE SET holder = excluded.holder, kind = excluded.kind, held_until_ms = excluded.held_until_ms`,
  ),
  /** `mayHandOver` (src/scheduler/capacity.ts), the breaker and the holder, in the one write. */
  handOverSlot: statement(
    "hand_over_authority_slot",
    `UPDATE authority_slots SET holder = $4, held_until_ms = $6
      WHERE authority = $1 AND slot = $2 AND holder = $3 AND kind = $5 AND slot <= $9 AND held_until_ms > $7
        AND NOT EXISTS (SELECT 1 FROM authority_breakers b WHERE b.authority = $1 AND b.state <> 'closed')
        AND (NOT EXISTS (SELECT 1 FROM authority_capacity c WHERE c.authority = $1
                          AND CASE WHEN $5 = 'submit' THEN c.polls_waiting_until_ms ELSE c.submits_waiting_until_ms END > $8)
             OR $5 = 'submit' AND (SELECT count(*) FROM authority_slots s
                  WHERE s.authority = $1 AND s.kind = $5 AND s.holder IS NOT NULL AND s.held_until_ms > $8 AND s.slot <= $9) < $9)`,
  ),
  holdSlot: statement(
    "hold_authority_slot",
    "UPDATE authority_slots SET held_until_ms = $4 WHERE authority = $1 AND slot = $2 AND holder = $3",
  ),
  releaseSlot: statement(
    "release_authority_slot",
    "UPDATE authority_slots SET holder = NULL, kind = NULL, held_until_ms = 0 WHERE authority = $1 AND slot = $2 AND holder = $3",
  ),
  setCapacity: statement(
    "set_authority_capacity",
    "UPDATE authority_capacity SET next_send_ms = $2, submits_waiting_until_ms = $3, polls_waiting_until_ms = $4 WHERE authority = $1",
  ),
} as const;
