-- contract: a rebuild, not a removal: work_items and work_item_history keep every column, key and
-- index they had, so a previous release's processes read and write them as before.
--
-- The kinds a `kind` column takes come from the code from now on (src/store/kinds.ts), so a new
-- kind of work item needs no migration. SQLite cannot alter a CHECK, so the two tables are rebuilt
-- (see 0013) without their kind CHECKs, each `kind` referencing a table of the kinds it takes,
-- which the migrator fills from the code's lists after the numbered migrations
-- (sqlite/kind-tables.ts). Here they get the kinds the CHECKs took, for the rows already written.
-- The PostgreSQL twin keeps its CHECKs, which the migrator widens in place.

CREATE TABLE work_item_kinds (kind TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO work_item_kinds (kind) VALUES ('create'), ('change'), ('withdraw');
CREATE TABLE work_item_history_kinds (kind TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT INTO work_item_history_kinds (kind) VALUES ('status'), ('attempt'), ('operator'), ('change'), ('withdraw');

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
  kind                  TEXT NOT NULL DEFAULT 'create' REFERENCES work_item_kinds (kind),
  original_work_item_id INTEGER,
  -- A create: the changes applied to its document so far.
  revision              INTEGER NOT NULL DEFAULT 0,
  store_generation      INTEGER NOT NULL DEFAULT 0,
  trace_parent          TEXT,
  generation_id         TEXT,
  CHECK ((kind = 'create') = (original_work_item_id IS NULL)),
  FOREIGN KEY (company_id, work_batch_id) REFERENCES work_batches (company_id, work_batch_id),
  FOREIGN KEY (company_id, original_work_item_id) REFERENCES work_items (company_id, work_item_id)
);
INSERT INTO work_items_new (work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at,
  application_number, registration_number, submitted_at, decided_at, deadline_at, polls, deadline_risk_at, claimed_by,
  kind, original_work_item_id, revision, store_generation, trace_parent, generation_id)
SELECT work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
  webhook_url, request, result, error, attempts, next_attempt_at, last_error, created_at, updated_at, completed_at,
  application_number, registration_number, submitted_at, decided_at, deadline_at, polls, deadline_risk_at, claimed_by,
  kind, original_work_item_id, revision, store_generation, trace_parent, generation_id
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
CREATE INDEX work_items_succeeded_recently ON work_items (completed_at, company_id) WHERE status = 'Successful';

CREATE TABLE work_item_history_new (
  entry_id       INTEGER PRIMARY KEY,
  company_id     INTEGER NOT NULL,
  work_item_id   INTEGER NOT NULL,
  at             TEXT NOT NULL,
  kind           TEXT NOT NULL REFERENCES work_item_history_kinds (kind),
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
