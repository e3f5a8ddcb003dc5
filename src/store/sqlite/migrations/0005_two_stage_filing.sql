-- Filing in two stages (SPEC §10): an item is Submitted (with the Authority's application
-- number) before it is decided; it has a filing deadline; the circuit breaker in front of the
-- Authority is shared by every process. SQLite cannot change a CHECK constraint, so work_items
-- and webhook_outbox are rebuilt (the migration runs with foreign keys off and checks them
-- before it commits).

CREATE TABLE work_items_new (
  work_item_id        INTEGER PRIMARY KEY,
  company_id          INTEGER NOT NULL,
  work_batch_id       INTEGER NOT NULL,
  work_type           TEXT NOT NULL,
  status              TEXT NOT NULL CHECK (status IN ('New', 'InProgress', 'Submitted', 'Successful', 'Failed', 'Cancelled')),
  customer_reference  TEXT NOT NULL,
  document_reference  TEXT,
  webhook_url         TEXT,
  request             TEXT NOT NULL,
  result              TEXT,
  error               TEXT,
  attempts            INTEGER NOT NULL DEFAULT 0,
  next_attempt_at     TEXT,
  last_error          TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  completed_at        TEXT,
  application_number  TEXT,
  registration_number TEXT,
  submitted_at        TEXT,
  decided_at          TEXT,
  deadline_at         TEXT,
  -- Status requests answered pending so far: the next one waits BOT_POLL_SECONDS × 2^polls.
  polls               INTEGER NOT NULL DEFAULT 0,
  -- When workitem.deadline_at_risk was emitted (once).
  deadline_risk_at    TEXT,
  FOREIGN KEY (company_id, work_batch_id) REFERENCES work_batches (company_id, work_batch_id)
);
INSERT INTO work_items_new (work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at)
SELECT work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at
FROM work_items;
DROP TABLE work_items;
ALTER TABLE work_items_new RENAME TO work_items;
CREATE UNIQUE INDEX work_items_by_company ON work_items (company_id, work_item_id);
CREATE INDEX work_items_by_batch ON work_items (company_id, work_batch_id, work_item_id);
CREATE INDEX work_items_by_status_not_new ON work_items (company_id, status, work_item_id) WHERE status <> 'New';
CREATE INDEX work_items_by_reference ON work_items (company_id, customer_reference, work_item_id);

CREATE TABLE webhook_outbox_new (
  company_id      INTEGER NOT NULL,
  event_id        TEXT NOT NULL,
  work_item_id    INTEGER NOT NULL,
  event_type      TEXT NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried')),
  url             TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner     TEXT,
  last_status     INTEGER,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  delivered_at    TEXT,
  PRIMARY KEY (company_id, event_id),
  FOREIGN KEY (company_id, work_item_id) REFERENCES work_items (company_id, work_item_id)
) WITHOUT ROWID;
INSERT INTO webhook_outbox_new SELECT * FROM webhook_outbox;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_new RENAME TO webhook_outbox;
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_by_item ON webhook_outbox (company_id, work_item_id);
CREATE INDEX webhook_outbox_due_by_company ON webhook_outbox (company_id, next_attempt_at) WHERE status = 'Pending';

-- Not tenant data: one row per authority, read by every worker process and `bot run-once`.
-- `until`: when an open breaker lets one probe through, or when a probe's turn ends.
CREATE TABLE authority_breakers (
  authority   TEXT PRIMARY KEY,
  state       TEXT NOT NULL CHECK (state IN ('closed', 'open', 'halfOpen')),
  until       TEXT,
  probe_owner TEXT,
  updated_at  TEXT NOT NULL
);
