-- Companies, their API keys, batches, items and idempotency records.
-- Every tenant table carries company_id and every query filters by it.

CREATE TABLE companies (
  company_id     INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  webhook_secret TEXT,
  created_at     TEXT NOT NULL
);

CREATE TABLE api_keys (
  company_id  INTEGER NOT NULL REFERENCES companies (company_id),
  key_id      TEXT NOT NULL,
  name        TEXT,
  secret_hash TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT,
  PRIMARY KEY (company_id, key_id)
) WITHOUT ROWID;
-- The admin CLI revokes by key id alone.
CREATE INDEX api_keys_by_key_id ON api_keys (key_id);

CREATE TABLE work_batches (
  work_batch_id    INTEGER PRIMARY KEY,
  company_id       INTEGER NOT NULL REFERENCES companies (company_id),
  work_type        TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('Open', 'Closed', 'Processing', 'Completed')),
  item_count       INTEGER NOT NULL DEFAULT 0,
  created_at       TEXT NOT NULL,
  closed_at        TEXT,
  completed_at     TEXT,
  lease_owner      TEXT,
  lease_expires_at TEXT
);
-- At most one Open batch per company and work type, enforced by the database itself.
CREATE UNIQUE INDEX work_batches_one_open ON work_batches (company_id, work_type) WHERE status = 'Open';
CREATE UNIQUE INDEX work_batches_by_company ON work_batches (company_id, work_batch_id);
CREATE INDEX work_batches_by_status ON work_batches (status, company_id);

CREATE TABLE work_items (
  work_item_id       INTEGER PRIMARY KEY,
  company_id         INTEGER NOT NULL,
  work_batch_id      INTEGER NOT NULL,
  work_type          TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('New', 'InProgress', 'Successful', 'Failed', 'Cancelled')),
  customer_reference TEXT NOT NULL,
  document_reference TEXT,
  webhook_url        TEXT,
  request            TEXT NOT NULL,
  result             TEXT,
  error              TEXT,
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at    TEXT,
  last_error         TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  completed_at       TEXT,
  FOREIGN KEY (company_id, work_batch_id) REFERENCES work_batches (company_id, work_batch_id)
);
CREATE UNIQUE INDEX work_items_by_company ON work_items (company_id, work_item_id);
CREATE INDEX work_items_by_batch ON work_items (company_id, work_batch_id, work_item_id);
CREATE INDEX work_items_by_status ON work_items (company_id, status, work_item_id);
CREATE INDEX work_items_by_reference ON work_items (company_id, customer_reference, work_item_id);

CREATE TABLE idempotency_keys (
  company_id      INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  work_batch_id   INTEGER NOT NULL,
  work_item_id    INTEGER NOT NULL,
  created_at      TEXT NOT NULL,
  PRIMARY KEY (company_id, idempotency_key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
