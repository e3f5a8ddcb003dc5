/**
 * The statements of the filing queue (SPEC §14), named and written once for both backends (see
 * ../port.ts). Every statement names its company, except the named reads of the lane tables
 * (filing_lanes, status_lanes: a row per company with work, not per item).
 */
import { statement } from "../port.ts";
import { ITEM_COLUMNS, MOVED_COLUMNS } from "./sql-work-items.ts";

/** A lane's items: every statement about one lane says it the same way. */
const IN_LANE = "company_id = $1 AND work_type = $2 AND deadline_at = $3";
const IN_LANE_WITHOUT_DEADLINE = "company_id = $1 AND work_type = $2 AND deadline_at IS NULL";
/** An item waiting in a lane: New and due at some time, or InProgress with its claim's lease. */
const LANE_ITEM = "status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL";
/**
 * Not of a paused work type (SPEC §12.2): `table` names the alias whose work_type it looks at.
 * NOT IN, not NOT EXISTS: PostgreSQL turns NOT EXISTS into an anti-join, which loses the lane
 * index's order, so with analysed statistics a claim sorted all 4,000 lanes of the 100,000-item
 * queue to take 9 (2.9 ms against 0.04 ms). NOT IN stays a filter on a hashed subplan, read once
 * per statement, and the lanes are read in index order up to the LIMIT. work_type is the key of
 * bot_pauses, never NULL, so the two mean the same.
 */
const notPaused = (table: string) => `${table}.work_type NOT IN (SELECT p.work_type FROM bot_pauses p)`;
const LANE_NOT_PAUSED = notPaused("l");
const LANE_COLUMNS = "l.company_id, l.work_type, l.deadline_at, l.served_seq";
/** An original's changes and withdrawal waiting or being filed. */
const FOLLOW_UP_OPEN = "f.company_id = $1 AND f.original_work_item_id = $2 AND f.status IN ('New', 'InProgress')";
/**
 * A change or withdrawal claimed: what the bot files it with, its original's number and state
 * (SPEC §15). The original is looked up in company $1, the claim's: naming the company by the
 * parameter, not by the outer row, is what lets Citus send the whole claim to the company's one
 * shard (with `o.company_id = work_items.company_id` it ran the UPDATE on every shard).
 */
const DUE_ITEM_COLUMNS = `company_id, work_batch_id, work_item_id, store_generation, generation_id, trace_parent, work_type, status, request, attempts, deadline_at, kind, original_work_item_id, revision,
  (SELECT o.application_number FROM work_items o WHERE o.company_id = $1 AND o.work_item_id = work_items.original_work_item_id)
    AS original_application_number,
  (SELECT o.status FROM work_items o WHERE o.company_id = $1 AND o.work_item_id = work_items.original_work_item_id)
    AS original_status`;

/**
 * Claims up to `limit` due items of one lane, in intake order: InProgress, held by `owner` until
 * `lease` (the values after the lane's key: dueBefore, owner, lease, limit, now).
 */
const claimLane = (name: string, lane: string, first: number) => {
  const [dueBefore, owner, lease, limit, now] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  return statement(
    name,
    // A materialized CTE runs its LIMIT once: as an IN subquery PostgreSQL may run it again.
    (d) => `WITH picked AS MATERIALIZED (
        SELECT work_item_id FROM work_items
         WHERE ${lane} AND ${LANE_ITEM} AND next_attempt_at <= ${dueBefore}
         ORDER BY work_item_id LIMIT ${limit}${d.forUpdateSkipLocked})
      UPDATE work_items SET status = 'InProgress', claimed_by = ${owner}, next_attempt_at = ${lease}, updated_at = ${now}
      WHERE company_id = $1 AND work_item_id IN (SELECT work_item_id FROM picked)
      RETURNING ${DUE_ITEM_COLUMNS}`,
  );
};

/** The earliest time an item of the lane is due (or its claim runs out); none when the lane is empty. */
const laneReadyAt = (name: string, lane: string) =>
  statement(name, `SELECT MIN(next_attempt_at) AS ready_at FROM work_items WHERE ${lane} AND ${LANE_ITEM}`);

export const FILING_QUEUE_SQL = {
  /**
   * Across companies, the pass's first step: companies with batches to take up (an Open one with
   * items, or a Closed one, of a work type not paused) or unfinished ones (whose deadlines are
   * watched). Each part walks the batches' status index.
   */
  companiesWithBotWork: statement(
    "companies_with_bot_work",
    `SELECT company_id, MAX(to_queue) AS to_queue FROM (
       SELECT b.company_id, CASE WHEN ${notPaused("b")} THEN 1 ELSE 0 END AS to_queue
         FROM work_batches b WHERE b.status = 'Open' AND b.item_count > 0
       UNION ALL
       SELECT b.company_id, CASE WHEN b.status = 'Closed' AND ${notPaused("b")} THEN 1 ELSE 0 END
         FROM work_batches b WHERE b.status IN ('Closed', 'Processing')
     ) work
     GROUP BY company_id ORDER BY company_id`,
    { table: "work_batches", orderBy: ["company_id"] },
  ),
  /**
   * The company's Closed batches of work types not paused, locked in id order (by a write that
   * changes nothing: see BATCHES_SQL.holdOpenBatch). The caller takes them up in id order.
   */
  holdClosedBatches: statement(
    "hold_closed_batches",
    (d) => `WITH closed AS (
       SELECT work_batch_id FROM work_batches b
        WHERE b.company_id = $1 AND b.status = 'Closed' AND ${notPaused("b")}
        ORDER BY b.work_batch_id${d.forUpdate})
     UPDATE work_batches SET company_id = company_id
      WHERE company_id = $1 AND work_batch_id IN (SELECT work_batch_id FROM closed) AND status = 'Closed'
      RETURNING work_batch_id`,
  ),
  /**
   * The batch's New items join the queue, due from $3: every create, and a change or withdrawal
   * whose original is filed and that is the first of its original's still to be filed (the rest
   * wait, unqueued, for transition.ts to release them; SPEC §15).
   */
  queueBatchItems: statement(
    "queue_batch_items",
    `UPDATE work_items SET next_attempt_at = $3
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'New'
        AND (kind = 'create'
          OR EXISTS (SELECT 1 FROM work_items o WHERE o.company_id = $1 AND o.work_item_id = work_items.original_work_item_id
                        AND o.status IN ('Submitted', 'Successful'))
             AND NOT EXISTS (SELECT 1 FROM work_items f WHERE f.company_id = $1 AND f.original_work_item_id = work_items.original_work_item_id
                                AND f.work_item_id < work_items.work_item_id AND f.status IN ('New', 'InProgress')))`,
  ),
  /**
   * The batch's changes and withdrawals whose original is closed (an operator's retry can bring
   * one back) fail without a call, with error $3: they would wait for ever.
   */
  failOrphanedFollowUps: statement(
    "fail_orphaned_follow_ups",
    `UPDATE work_items SET status = 'Failed', error = $3, next_attempt_at = NULL, updated_at = $4, completed_at = $4
      WHERE company_id = $1 AND work_batch_id = $2 AND status = 'New' AND kind <> 'create'
        AND EXISTS (SELECT 1 FROM work_items o WHERE o.company_id = $1 AND o.work_item_id = work_items.original_work_item_id
                       AND o.status IN ('Failed', 'Cancelled', 'Withdrawn'))
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** The batch's items to finish: its New ones, queued or waiting. */
  batchNewItems: statement("batch_new_items", "SELECT COUNT(*) AS new_items FROM work_items WHERE company_id = $1 AND work_batch_id = $2 AND status = 'New'"),
  /** The state of an original. */
  originalStatus: statement("original_status", "SELECT status FROM work_items WHERE company_id = $1 AND work_item_id = $2"),
  /**
   * The first of original $2's changes and withdrawal still to be filed joins the queue, if it
   * waits unqueued in a batch the bot took up: due since it was stored, so the pass under way
   * files it too.
   */
  releaseNextFollowUp: statement(
    "release_next_follow_up",
    `UPDATE work_items SET next_attempt_at = created_at
      WHERE company_id = $1 AND status = 'New' AND next_attempt_at IS NULL
        AND work_item_id = (SELECT MIN(f.work_item_id) FROM work_items f WHERE ${FOLLOW_UP_OPEN})
        AND work_batch_id IN (SELECT b.work_batch_id FROM work_batches b WHERE b.company_id = $1 AND b.status = 'Processing')
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** Original $2 closed: its changes and withdrawal not filed yet fail without a call, with error $3. */
  failWaitingFollowUps: statement(
    "fail_waiting_follow_ups",
    `UPDATE work_items SET status = 'Failed', error = $3, next_attempt_at = NULL, updated_at = $4, completed_at = $4
      WHERE company_id = $1 AND original_work_item_id = $2 AND status = 'New'
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** A lane for each work type and deadline of the batch's queued items (or an earlier ready_at for one that exists). */
  addBatchLanes: statement(
    "add_batch_lanes",
    `INSERT INTO filing_lanes (company_id, work_type, deadline_at, ready_at, served_seq)
     SELECT i.company_id, i.work_type, COALESCE(i.deadline_at, $3), MIN(i.next_attempt_at), MAX(c.filing_served_seq)
       FROM work_items i JOIN companies c ON c.company_id = i.company_id
      WHERE i.company_id = $1 AND i.work_batch_id = $2 AND i.status = 'New' AND i.next_attempt_at IS NOT NULL
      GROUP BY i.company_id, i.work_type, COALESCE(i.deadline_at, $3)
     ON CONFLICT (company_id, work_type, deadline_at) DO UPDATE
        SET ready_at = CASE WHEN excluded.ready_at < filing_lanes.ready_at THEN excluded.ready_at ELSE filing_lanes.ready_at END`,
  ),
  /**
   * An item (back) in its lane, due at $4: the lane exists, and is ready no later than that. A new
   * lane takes its company's turn. INSERT … SELECT, not a subquery in VALUES, which Citus refuses.
   */
  enterFilingLane: statement(
    "enter_filing_lane",
    `INSERT INTO filing_lanes (company_id, work_type, deadline_at, ready_at, served_seq)
     SELECT c.company_id, $2, $3, $4, c.filing_served_seq FROM companies c WHERE c.company_id = $1
     ON CONFLICT (company_id, work_type, deadline_at) DO UPDATE
        SET ready_at = CASE WHEN excluded.ready_at < filing_lanes.ready_at THEN excluded.ready_at ELSE filing_lanes.ready_at END`,
  ),

  /**
   * Across companies (named reads of the lane table): the first lanes of one tier that are ready
   * by the pass's start, in lane order. On time: deadline at or after now ($1) and before "no
   * deadline" ($3), ready by $2, at most $4.
   */
  onTimeLanes: statement(
    "on_time_lanes",
    `SELECT ${LANE_COLUMNS} FROM filing_lanes l
      WHERE l.deadline_at >= $1 AND l.deadline_at < $3 AND l.ready_at <= $2 AND ${LANE_NOT_PAUSED}
      ORDER BY l.deadline_at, l.served_seq, l.company_id, l.work_type LIMIT $4`,
    { table: "filing_lanes", orderBy: ["deadline_at", "served_seq", "company_id", "work_type"], limitParameter: 4 },
  ),
  /** Late: deadline before now ($1), ready by $2, at most $3. */
  lateLanes: statement(
    "late_lanes",
    `SELECT ${LANE_COLUMNS} FROM filing_lanes l
      WHERE l.deadline_at < $1 AND l.ready_at <= $2 AND ${LANE_NOT_PAUSED}
      ORDER BY l.deadline_at, l.served_seq, l.company_id, l.work_type LIMIT $3`,
    { table: "filing_lanes", orderBy: ["deadline_at", "served_seq", "company_id", "work_type"], limitParameter: 3 },
  ),
  /** No deadline ($1), ready by $2, at most $3. */
  lanesWithoutDeadline: statement(
    "lanes_without_deadline",
    `SELECT ${LANE_COLUMNS} FROM filing_lanes l
      WHERE l.deadline_at = $1 AND l.ready_at <= $2 AND ${LANE_NOT_PAUSED}
      ORDER BY l.served_seq, l.company_id, l.work_type LIMIT $3`,
    { table: "filing_lanes", orderBy: ["served_seq", "company_id", "work_type"], limitParameter: 3 },
  ),
  /** The lane's first $5 items due by $4, in intake order: a claim's candidates. */
  dueLaneItems: statement(
    "due_lane_items",
    `SELECT work_item_id FROM work_items WHERE ${IN_LANE} AND ${LANE_ITEM} AND next_attempt_at <= $4 ORDER BY work_item_id LIMIT $5`,
  ),
  dueLaneItemsWithoutDeadline: statement(
    "due_lane_items_without_deadline",
    `SELECT work_item_id FROM work_items WHERE ${IN_LANE_WITHOUT_DEADLINE} AND ${LANE_ITEM} AND next_attempt_at <= $3 ORDER BY work_item_id LIMIT $4`,
  ),
  claimLane: claimLane("claim_lane", IN_LANE, 4),
  claimLaneWithoutDeadline: claimLane("claim_lane_without_deadline", IN_LANE_WITHOUT_DEADLINE, 3),
  laneReadyAt: laneReadyAt("lane_ready_at", IN_LANE),
  laneWithoutDeadlineReadyAt: laneReadyAt("lane_without_deadline_ready_at", IN_LANE_WITHOUT_DEADLINE),
  /**
   * Holds the lane: whoever deletes it looks for its items only after this (see dropLaneIfEmpty).
   * A write that changes nothing (see BATCHES_SQL.holdOpenBatch).
   */
  holdFilingLane: statement(
    "hold_filing_lane",
    "UPDATE filing_lanes SET company_id = company_id WHERE company_id = $1 AND work_type = $2 AND deadline_at = $3 RETURNING ready_at",
  ),
  /** As holdFilingLane, for a claim, which never waits for a lane: no row when another transaction holds it. */
  tryHoldFilingLane: statement(
    "try_hold_filing_lane",
    (d) => `WITH free AS (SELECT work_type FROM filing_lanes WHERE company_id = $1 AND work_type = $2 AND deadline_at = $3${d.forUpdateSkipLocked})
     UPDATE filing_lanes SET company_id = company_id
      WHERE company_id = $1 AND work_type IN (SELECT work_type FROM free) AND deadline_at = $3
      RETURNING ready_at`,
  ),
  setLaneReadyAt: statement(
    "set_lane_ready_at",
    "UPDATE filing_lanes SET ready_at = $4 WHERE company_id = $1 AND work_type = $2 AND deadline_at = $3",
  ),
  deleteFilingLane: statement("delete_filing_lane", "DELETE FROM filing_lanes WHERE company_id = $1 AND work_type = $2 AND deadline_at = $3"),
  /**
   * The company's turn moves to the back: on each of its lanes, and in its own row for lanes to
   * come. A lane another transaction holds keeps its turn until the company is served again: a
   * claim never waits for a lane (see claimFilingWork).
   */
  serveCompanyLanes: statement(
    "serve_company_lanes",
    (d) => `UPDATE filing_lanes SET served_seq = $2
      WHERE company_id = $1 AND (work_type, deadline_at) IN (
        SELECT work_type, deadline_at FROM filing_lanes WHERE company_id = $1 AND served_seq < $2${d.forUpdateSkipLocked})`,
  ),
  serveCompany: statement("serve_company", "UPDATE companies SET filing_served_seq = $2 WHERE company_id = $1 AND filing_served_seq < $2"),

  /** Across companies (a named read of the lane table): up to $2 status lanes due by $1, the longest waiting first. */
  dueStatusLanes: statement(
    "due_status_lanes",
    `SELECT l.company_id, l.work_type, l.ready_at FROM status_lanes l WHERE l.ready_at <= $1 AND ${LANE_NOT_PAUSED}
      ORDER BY l.ready_at, l.company_id, l.work_type LIMIT $2`,
    { table: "status_lanes", orderBy: ["ready_at", "company_id", "work_type"], limitParameter: 2 },
  ),
  /** Up to $6 of the lane's Submitted items due by $3, held by $4 until $5 (the lease). */
  claimStatusRequests: statement(
    "claim_status_requests",
    (d) => `WITH picked AS MATERIALIZED (
        SELECT work_item_id FROM work_items
         WHERE company_id = $1 AND work_type = $2 AND status = 'Submitted' AND next_attempt_at <= $3
         ORDER BY next_attempt_at, work_item_id LIMIT $6${d.forUpdateSkipLocked})
      UPDATE work_items SET claimed_by = $4, next_attempt_at = $5
      WHERE company_id = $1 AND work_item_id IN (SELECT work_item_id FROM picked)
      RETURNING company_id, work_batch_id, work_item_id, work_type, application_number, polls, trace_parent`,
  ),
  statusLaneReadyAt: statement(
    "status_lane_ready_at",
    "SELECT MIN(next_attempt_at) AS ready_at FROM work_items WHERE company_id = $1 AND work_type = $2 AND status = 'Submitted'",
  ),
  /** Only a claim settles a status lane, and it never waits for one: no row when another claim holds it. */
  tryHoldStatusLane: statement(
    "try_hold_status_lane",
    (d) => `WITH free AS (SELECT work_type FROM status_lanes WHERE company_id = $1 AND work_type = $2${d.forUpdateSkipLocked})
     UPDATE status_lanes SET company_id = company_id
      WHERE company_id = $1 AND work_type IN (SELECT work_type FROM free)
      RETURNING ready_at`,
  ),
  setStatusLaneReadyAt: statement("set_status_lane_ready_at", "UPDATE status_lanes SET ready_at = $3 WHERE company_id = $1 AND work_type = $2"),
  deleteStatusLane: statement("delete_status_lane", "DELETE FROM status_lanes WHERE company_id = $1 AND work_type = $2"),
  enterStatusLane: statement(
    "enter_status_lane",
    `INSERT INTO status_lanes (company_id, work_type, ready_at) VALUES ($1, $2, $3)
     ON CONFLICT (company_id, work_type) DO UPDATE
        SET ready_at = CASE WHEN excluded.ready_at < status_lanes.ready_at THEN excluded.ready_at ELSE status_lanes.ready_at END`,
  ),

  /** A claimed item whose call was not made, back in its place: due from $5, no attempt spent. */
  releaseFilingItem: statement(
    "release_filing_item",
    `UPDATE work_items SET status = 'New', claimed_by = NULL, next_attempt_at = $5, updated_at = $4
      WHERE company_id = $1 AND work_item_id = $2 AND status = 'InProgress' AND claimed_by = $3
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** A claimed status request not made: due from $4. */
  releaseStatusItem: statement(
    "release_status_item",
    `UPDATE work_items SET claimed_by = NULL, next_attempt_at = $4
      WHERE company_id = $1 AND work_item_id = $2 AND status = 'Submitted' AND claimed_by = $3
      RETURNING ${MOVED_COLUMNS}`,
  ),
  /** The company's turn back to $2, where it is still the $3 a claim gave it (lanes first, as a claim's serve). */
  restoreCompanyLanesTurn: statement(
    "restore_company_lanes_turn",
    "UPDATE filing_lanes SET served_seq = $2 WHERE company_id = $1 AND served_seq = $3",
  ),
  restoreCompanyTurn: statement("restore_company_turn", "UPDATE companies SET filing_served_seq = $2 WHERE company_id = $1 AND filing_served_seq = $3"),

  /**
   * Flags the company's items still waiting to be filed whose deadline is near, once; they are
   * only in batches that are not Completed.
   */
  flagDeadlinesAtRisk: statement(
    "flag_deadlines_at_risk",
    `UPDATE work_items SET deadline_risk_at = $3
      WHERE company_id = $1
        AND work_batch_id IN (SELECT work_batch_id FROM work_batches WHERE company_id = $1 AND status <> 'Completed')
        AND status IN ('New', 'InProgress') AND deadline_at <= $2 AND deadline_risk_at IS NULL
      RETURNING ${ITEM_COLUMNS}`,
  ),
} as const;
