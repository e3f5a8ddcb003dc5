/**
 * The statements of events (SPEC §11.2): the company's feed, numbered in commit order, and the
 * webhook outbox row an event makes. Named and written once for both backends (see ../port.ts).
 */
import { statement } from "../port.ts";

export const EVENTS_SQL = {
  /**
   * The event feed's numbering (SPEC §11.2): moves the company's last position on by $2 and
   * returns it. The row stays locked until the transaction ends, so the company's next writer
   * numbers its events only once these are committed: positions follow commit order.
   */
  advanceEventSequence: statement(
    "advance_event_sequence",
    `INSERT INTO event_sequences (company_id, last_position) VALUES ($1, $2)
     ON CONFLICT (company_id) DO UPDATE SET last_position = event_sequences.last_position + excluded.last_position
     RETURNING last_position`,
  ),
  insertEvent: statement(
    "insert_event",
    "INSERT INTO events (company_id, position, event_id, event_type, work_item_id, created_at, data) VALUES ($1, $2, $3, $4, $5, $6, $7)",
  ),
  insertOutboxRow: statement(
    "insert_outbox_row",
    (d) => `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at, delivery_id)
     VALUES ($1, $2, $3, $4, $5, 'Pending', $6, $6, ${d.newId("webhook_outbox")})`,
  ),
  /**
   * Across companies, the event sweep's step 1: companies holding events created at or before
   * $1, one index probe per company that ever had an event.
   */
  companiesWithExpiredEvents: statement(
    "companies_with_expired_events",
    `SELECT s.company_id FROM event_sequences s
      WHERE EXISTS (SELECT 1 FROM events e WHERE e.company_id = s.company_id AND e.created_at <= $1)
      ORDER BY s.company_id LIMIT $2`,
    { table: "event_sequences", colocated: ["events"], orderBy: ["company_id"], limitParameter: 2 },
  ),
  /** Step 2, one company at a time: at most $3 of its oldest expired events. */
  deleteExpiredEvents: statement(
    "delete_expired_events",
    `DELETE FROM events WHERE company_id = $1 AND position IN (
       SELECT position FROM events WHERE company_id = $1 AND created_at <= $2 ORDER BY created_at LIMIT $3)`,
  ),
} as const;
