-- Operations (SPEC §12): operators, their tokens and console sessions, the audit log, paused
-- work types, the last bot pass, each item's history, and item counts per company. The
-- PostgreSQL twin explains each table.
CREATE TABLE operators (
  operator_id   TEXT PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE,
  role          TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  password_hash TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  disabled_at   TEXT
);

CREATE TABLE operator_tokens (
  token_hash  TEXT PRIMARY KEY,
  operator_id TEXT NOT NULL REFERENCES operators (operator_id),
  created_at  TEXT NOT NULL
);
CREATE INDEX operator_tokens_by_operator ON operator_tokens (operator_id);

CREATE TABLE operator_sessions (
  session_hash TEXT PRIMARY KEY,
  operator_id  TEXT NOT NULL REFERENCES operators (operator_id),
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
);
CREATE INDEX operator_sessions_by_operator ON operator_sessions (operator_id);

CREATE TABLE audit_log (
  audit_id       INTEGER PRIMARY KEY,
  at             TEXT NOT NULL,
  operator_id    TEXT NOT NULL,
  operator_email TEXT NOT NULL,
  action         TEXT NOT NULL,
  company_id     INTEGER,
  work_item_id   INTEGER,
  work_type      TEXT,
  delivery_id    INTEGER,
  reason         TEXT NOT NULL
);

CREATE TABLE bot_pauses (
  work_type TEXT PRIMARY KEY,
  paused_at TEXT NOT NULL
);

CREATE TABLE bot_last_pass (
  singleton   INTEGER PRIMARY KEY DEFAULT 1 CHECK (singleton = 1),
  started_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  submitted   INTEGER NOT NULL,
  succeeded   INTEGER NOT NULL,
  failed      INTEGER NOT NULL,
  retried     INTEGER NOT NULL
);

CREATE TABLE work_item_history (
  entry_id       INTEGER PRIMARY KEY,
  company_id     INTEGER NOT NULL,
  work_item_id   INTEGER NOT NULL,
  at             TEXT NOT NULL,
  kind           TEXT NOT NULL CHECK (kind IN ('status', 'attempt', 'operator')),
  status         TEXT,
  detail         TEXT,
  operator_id    TEXT,
  operator_email TEXT,
  reason         TEXT
);
CREATE INDEX work_item_history_by_item ON work_item_history (company_id, work_item_id, entry_id);

-- Item counts per company and status, kept by row triggers (the single writer makes each upsert
-- a hit on a cached page) so the overview reads a few thousand rows instead of counting every
-- item. New items are left out, as on PostgreSQL, where counting them cost intake a third more
-- CPU per item: the overview counts them where it looks for the oldest one.
CREATE TABLE company_item_counts (
  company_id INTEGER NOT NULL,
  status     TEXT NOT NULL,
  item_count INTEGER NOT NULL,
  PRIMARY KEY (company_id, status)
) WITHOUT ROWID;
INSERT INTO company_item_counts (company_id, status, item_count)
  SELECT company_id, status, count(*) FROM work_items WHERE status <> 'New' GROUP BY company_id, status;

CREATE TRIGGER work_items_counted_on_insert AFTER INSERT ON work_items WHEN new.status <> 'New' BEGIN
  INSERT INTO company_item_counts (company_id, status, item_count) VALUES (new.company_id, new.status, 1)
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = item_count + 1;
END;
-- From New there is no counter row to take one from; back to New (a retry) adds none.
CREATE TRIGGER work_items_counted_on_update AFTER UPDATE OF status ON work_items WHEN old.status <> new.status BEGIN
  UPDATE company_item_counts SET item_count = item_count - 1 WHERE company_id = old.company_id AND status = old.status;
  INSERT INTO company_item_counts (company_id, status, item_count) SELECT new.company_id, new.status, 1 WHERE new.status <> 'New'
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = item_count + 1;
END;

-- The rowid (work_item_id) already orders items newest first across companies; New items are
-- left out of the status index, as in migration 0003, so intake pays nothing for it.
CREATE INDEX work_items_by_status_across ON work_items (status, work_item_id) WHERE status <> 'New';
CREATE INDEX work_items_by_application_number ON work_items (application_number) WHERE application_number IS NOT NULL;
CREATE INDEX work_items_by_registration_number ON work_items (registration_number) WHERE registration_number IS NOT NULL;
-- The overview counts the last day's failures per company from this index alone.
CREATE INDEX work_items_failed_recently ON work_items (completed_at, company_id) WHERE status = 'Failed';
