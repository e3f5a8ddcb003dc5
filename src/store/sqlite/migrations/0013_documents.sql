-- Changing and withdrawing a filed document (SPEC §15): a work item has a kind (create, change
-- or withdraw); a change or withdrawal names its original; a create counts the changes applied
-- to it; Withdrawn is a terminal state of a create. SQLite cannot change a CHECK constraint, so
-- work_items, events and webhook_outbox are rebuilt (see 0005); work_item_history too, for its
-- two new kinds of entry. The PostgreSQL twin alters its constraints in place.

CREATE TABLE work_items_new (
  work_item_id          INTEGER PRIMARY KEY,
  company_id            INTEGER NOT NULL,
  work_batch_id         INTEGER NOT NULL,
  work_type             TEXT NOT NULL,
  status                TEXT NOT NULL CHECK (status IN ('New', 'InProgress', 'Submitted', 'Successful', 'Failed', 'Cancelled', 'Withdrawn')),
  customer_reference    TEXT NOT NULL,
  document_reference    TEXT,
  webhook_url           TEXT,
  request               TEXT NOT NULL,
  result                TEXT,
  error                 TEXT,
  attempts              INTEGER NOT NULL DEFAULT 0,
  next_attempt_at       TEXT,
  last_error            TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL,
  completed_at          TEXT,
  application_number    TEXT,
  registration_number   TEXT,
  submitted_at          TEXT,
  decided_at            TEXT,
  deadline_at           TEXT,
  polls                 INTEGER NOT NULL DEFAULT 0,
  deadline_risk_at      TEXT,
  claimed_by            TEXT,
  kind                  TEXT NOT NULL DEFAULT 'create' CHECK (kind IN ('create', 'change', 'withdraw')),
  original_work_item_id INTEGER,
  -- A create: the changes applied to its document so far.
  revision              INTEGER NOT NULL DEFAULT 0,
  CHECK ((kind = 'create') = (original_work_item_id IS NULL)),
  FOREIGN KEY (company_id, work_batch_id) REFERENCES work_batches (company_id, work_batch_id),
  FOREIGN KEY (company_id, original_work_item_id) REFERENCES work_items (company_id, work_item_id)
);
INSERT INTO work_items_new (work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at,
  application_number, registration_number, submitted_at, decided_at, deadline_at, polls, deadline_risk_at, claimed_by)
SELECT work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at,
  application_number, registration_number, submitted_at, decided_at, deadline_at, polls, deadline_risk_at, claimed_by
FROM work_items;
DROP TABLE work_items;
ALTER TABLE work_items_new RENAME TO work_items;
CREATE UNIQUE INDEX work_items_by_company ON work_items (company_id, work_item_id);
CREATE INDEX work_items_by_batch ON work_items (company_id, work_batch_id, work_item_id);
CREATE INDEX work_items_by_status_not_new ON work_items (company_id, status, work_item_id) WHERE status <> 'New';
CREATE INDEX work_items_by_reference ON work_items (company_id, customer_reference, work_item_id);
CREATE INDEX work_items_by_status_across ON work_items (status, work_item_id) WHERE status <> 'New';
CREATE INDEX work_items_by_application_number ON work_items (application_number) WHERE application_number IS NOT NULL;
CREATE INDEX work_items_by_registration_number ON work_items (registration_number) WHERE registration_number IS NOT NULL;
CREATE INDEX work_items_failed_recently ON work_items (completed_at, company_id) WHERE status = 'Failed';
CREATE INDEX work_items_filing_lane ON work_items (company_id, work_type, deadline_at, work_item_id)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_filing_lane_due ON work_items (company_id, work_type, deadline_at, next_attempt_at)
  WHERE status IN ('New', 'InProgress') AND next_attempt_at IS NOT NULL;
CREATE INDEX work_items_status_due ON work_items (company_id, work_type, next_attempt_at) WHERE status = 'Submitted';
CREATE INDEX work_items_new_by_deadline ON work_items (deadline_at, work_item_id, company_id) WHERE status = 'New';
CREATE INDEX work_items_submitted ON work_items (submitted_at, company_id) WHERE submitted_at IS NOT NULL;
-- An original's changes and withdrawals, in intake order; and the kind= filter of the list.
CREATE INDEX work_items_by_original ON work_items (company_id, original_work_item_id, work_item_id) WHERE original_work_item_id IS NOT NULL;
CREATE INDEX work_items_by_kind ON work_items (company_id, kind, work_item_id) WHERE kind <> 'create';
CREATE TRIGGER work_items_counted_on_insert AFTER INSERT ON work_items WHEN new.status <> 'New' BEGIN
  INSERT INTO company_item_counts (company_id, status, item_count) VALUES (new.company_id, new.status, 1)
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = item_count + 1;
END;

CREATE TABLE events_new (
  company_id   INTEGER NOT NULL,
  position     INTEGER NOT NULL,
  event_id     TEXT NOT NULL,
  event_type   TEXT NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried',
                          'workitem.changed', 'workitem.withdrawn')),
  work_item_id INTEGER NOT NULL,
  created_at   TEXT NOT NULL,
  data         TEXT NOT NULL
);
INSERT INTO events_new SELECT company_id, position, event_id, event_type, work_item_id, created_at, data FROM events;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE UNIQUE INDEX events_by_position ON events (company_id, position);
CREATE INDEX events_by_type ON events (company_id, event_type, position);
CREATE INDEX events_by_item ON events (company_id, work_item_id, position);
CREATE INDEX events_by_age ON events (company_id, created_at);

CREATE TABLE webhook_outbox_new (
  delivery_id     INTEGER PRIMARY KEY,
  company_id      INTEGER NOT NULL,
  event_id        TEXT NOT NULL,
  work_item_id    INTEGER NOT NULL,
  event_type      TEXT NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried',
                          'workitem.changed', 'workitem.withdrawn')),
  url             TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner     TEXT,
  last_status     INTEGER,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  delivered_at    TEXT,
  ended_at        TEXT,
  FOREIGN KEY (company_id, work_item_id) REFERENCES work_items (company_id, work_item_id)
);
INSERT INTO webhook_outbox_new SELECT delivery_id, company_id, event_id, work_item_id, event_type, url, status, attempts, next_attempt_at,
  lease_owner, last_status, last_error, created_at, delivered_at, ended_at FROM webhook_outbox;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_new RENAME TO webhook_outbox;
CREATE UNIQUE INDEX webhook_outbox_by_event ON webhook_outbox (company_id, event_id);
CREATE UNIQUE INDEX webhook_outbox_by_company ON webhook_outbox (company_id, delivery_id);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_due_by_company ON webhook_outbox (company_id, next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_by_item ON webhook_outbox (company_id, work_item_id, delivery_id);
CREATE INDEX webhook_outbox_by_status ON webhook_outbox (company_id, status, delivery_id);
CREATE INDEX webhook_outbox_ended ON webhook_outbox (ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE work_item_history_new (
  entry_id       INTEGER PRIMARY KEY,
  company_id     INTEGER NOT NULL,
  work_item_id   INTEGER NOT NULL,
  at             TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('status', 'attempt', 'operator', 'change', 'withdraw')),
  status         TEXT,
  detail         TEXT,
  operator_id    TEXT,
  operator_email TEXT,
  reason         TEXT
);
INSERT INTO work_item_history_new SELECT entry_id, company_id, work_item_id, at, kind, status, detail, operator_id, operator_email, reason
  FROM work_item_history;
DROP TABLE work_item_history;
ALTER TABLE work_item_history_new RENAME TO work_item_history;
CREATE INDEX work_item_history_by_item ON work_item_history (company_id, work_item_id, entry_id);
