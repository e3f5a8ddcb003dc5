-- One filing queue across companies (SPEC §14): the PostgreSQL twin of
-- sqlite/migrations/0010_filing_queue.sql (same number, same tables and columns).
--
-- The bot no longer claims a company's batch; it claims items, in one order over every company:
-- on-time deadlines first, then late ones, then items without a deadline; within a deadline the
-- company served least recently; within a company, intake order. The order lives in two small
-- tables of "lanes" that the bot reads across companies (docs/scaling.md): one row per company,
-- work type and deadline with items waiting to be filed, and one per company and work type with
-- filed items waiting for a status request. Everything after picking lanes names its company.

-- Who holds an item the bot took (InProgress while it is filed, Submitted while it is asked
-- about): the fence of every write about the call. next_attempt_at doubles as the claim's lease:
-- an item whose holder died is due again when it runs out.
ALTER TABLE work_items ADD COLUMN claimed_by text;
-- Items still to finish in a batch the bot has taken up; the batch completes when it reaches 0.
ALTER TABLE work_batches ADD COLUMN unfinished_items integer;
-- The company's turn: when the queue last served it (see src/scheduler/order.ts).
ALTER TABLE companies ADD COLUMN filing_served_seq bigint NOT NULL DEFAULT 0;

-- A lane's items in intake order, and its earliest due time. Intake's New items have no
-- next_attempt_at until their batch is queued, so intake pays for neither index.
CREATE INDEX work_items_filing_lane ON work_items (company_id, work_type, deadline_at, work_item_id)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_filing_lane_due ON work_items (company_id, work_type, deadline_at, next_attempt_at)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_status_due ON work_items (company_id, work_type, next_attempt_at) WHERE status = 'Submitted';

-- deadline_at '9999-12-31' stands for "no deadline" (a key column cannot be NULL).
CREATE TABLE filing_lanes (
  company_id  bigint NOT NULL,
  work_type   text NOT NULL,
  deadline_at timestamptz NOT NULL,
  -- No item of the lane is due before this (it may be earlier than the truth, never later).
  ready_at    timestamptz NOT NULL,
  served_seq  bigint NOT NULL,
  PRIMARY KEY (company_id, work_type, deadline_at)
);
CREATE INDEX filing_lanes_in_order ON filing_lanes (deadline_at, served_seq, company_id, work_type);

CREATE TABLE status_lanes (
  company_id bigint NOT NULL,
  work_type  text NOT NULL,
  ready_at   timestamptz NOT NULL,
  PRIMARY KEY (company_id, work_type)
);
CREATE INDEX status_lanes_due ON status_lanes (ready_at);

-- Not tenant data: the authority's capacity, shared by every worker process (SPEC §14). Times
-- are epoch milliseconds. next_send_ms is the rate limiter's theoretical arrival time (GCRA);
-- the *_waiting_until_ms marks say that submits or polls were kept waiting just now.
CREATE TABLE authority_capacity (
  authority                text PRIMARY KEY,
  next_send_ms             bigint NOT NULL DEFAULT 0,
  submits_waiting_until_ms bigint NOT NULL DEFAULT 0,
  polls_waiting_until_ms   bigint NOT NULL DEFAULT 0
);
-- One row per call slot (1..AUTHORITY_MAX_CONCURRENCY); a slot whose holder died frees itself
-- at held_until_ms.
CREATE TABLE authority_slots (
  authority     text NOT NULL,
  slot          integer NOT NULL,
  holder        text,
  kind          text,
  held_until_ms bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (authority, slot)
);

-- Batches the bot was working on: from now on queued, their items in lanes.
UPDATE work_items i SET next_attempt_at = COALESCE(i.next_attempt_at, now())
  FROM work_batches b
 WHERE b.company_id = i.company_id AND b.work_batch_id = i.work_batch_id AND b.status = 'Processing'
   AND i.status IN ('New', 'InProgress', 'Submitted');
UPDATE work_batches b SET unfinished_items = (
    SELECT count(*) FROM work_items i
     WHERE i.company_id = b.company_id AND i.work_batch_id = b.work_batch_id AND i.status IN ('New', 'InProgress', 'Submitted')),
  lease_owner = NULL, lease_expires_at = NULL, next_run_at = NULL
 WHERE b.status = 'Processing';
INSERT INTO filing_lanes (company_id, work_type, deadline_at, ready_at, served_seq)
  SELECT company_id, work_type, COALESCE(deadline_at, '9999-12-31T00:00:00Z'), min(next_attempt_at), 0
    FROM work_items WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL
   GROUP BY company_id, work_type, COALESCE(deadline_at, '9999-12-31T00:00:00Z');
INSERT INTO status_lanes (company_id, work_type, ready_at)
  SELECT company_id, work_type, min(next_attempt_at) FROM work_items WHERE status = 'Submitted' AND next_attempt_at IS NOT NULL
   GROUP BY company_id, work_type;
