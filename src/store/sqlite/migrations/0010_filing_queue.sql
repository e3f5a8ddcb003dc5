-- One filing queue across companies (SPEC §14); see postgres/migrations/0010_filing_queue.sql
-- for the why of each table and index (same number, same tables and columns).

ALTER TABLE work_items ADD COLUMN claimed_by TEXT;
ALTER TABLE work_batches ADD COLUMN unfinished_items INTEGER;
ALTER TABLE companies ADD COLUMN filing_served_seq INTEGER NOT NULL DEFAULT 0;

CREATE INDEX work_items_filing_lane ON work_items (company_id, work_type, deadline_at, work_item_id)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_filing_lane_due ON work_items (company_id, work_type, deadline_at, next_attempt_at)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_status_due ON work_items (company_id, work_type, next_attempt_at) WHERE status = 'Submitted';

-- deadline_at '9999-12-31T00:00:00.000Z' stands for "no deadline".
CREATE TABLE filing_lanes (
  company_id  INTEGER NOT NULL,
  work_type   TEXT NOT NULL,
  deadline_at TEXT NOT NULL,
  ready_at    TEXT NOT NULL,
  served_seq  INTEGER NOT NULL,
  PRIMARY KEY (company_id, work_type, deadline_at)
) WITHOUT ROWID;
CREATE INDEX filing_lanes_in_order ON filing_lanes (deadline_at, served_seq, company_id, work_type);

CREATE TABLE status_lanes (
  company_id INTEGER NOT NULL,
  work_type  TEXT NOT NULL,
  ready_at   TEXT NOT NULL,
  PRIMARY KEY (company_id, work_type)
) WITHOUT ROWID;
CREATE INDEX status_lanes_due ON status_lanes (ready_at);

CREATE TABLE authority_capacity (
  authority                TEXT PRIMARY KEY,
  next_send_ms             INTEGER NOT NULL DEFAULT 0,
  submits_waiting_until_ms INTEGER NOT NULL DEFAULT 0,
  polls_waiting_until_ms   INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE authority_slots (
  authority     TEXT NOT NULL,
  slot          INTEGER NOT NULL,
  holder        TEXT,
  kind          TEXT,
  held_until_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (authority, slot)
);

UPDATE work_items SET next_attempt_at = COALESCE(next_attempt_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
 WHERE status IN ('New', 'InProgress', 'Submitted')
   AND work_batch_id IN (SELECT work_batch_id FROM work_batches WHERE status = 'Processing');
UPDATE work_batches SET unfinished_items = (
    SELECT count(*) FROM work_items i
     WHERE i.company_id = work_batches.company_id AND i.work_batch_id = work_batches.work_batch_id
       AND i.status IN ('New', 'InProgress', 'Submitted')),
  lease_owner = NULL, lease_expires_at = NULL, next_run_at = NULL
 WHERE status = 'Processing';
INSERT INTO filing_lanes (company_id, work_type, deadline_at, ready_at, served_seq)
  SELECT company_id, work_type, COALESCE(deadline_at, '9999-12-31T00:00:00.000Z'), min(next_attempt_at), 0
    FROM work_items WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL
   GROUP BY company_id, work_type, COALESCE(deadline_at, '9999-12-31T00:00:00.000Z');
INSERT INTO status_lanes (company_id, work_type, ready_at)
  SELECT company_id, work_type, min(next_attempt_at) FROM work_items WHERE status = 'Submitted' AND next_attempt_at IS NOT NULL
   GROUP BY company_id, work_type;
