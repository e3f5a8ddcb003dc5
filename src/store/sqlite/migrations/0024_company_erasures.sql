-- A company that leaves (SPEC §22). An erase is recorded here while it runs, so that one killed
-- half-way resumes where it was (admin/company-erasure.ts), and so the console can show it: its
-- phase (keys revoked, then its work stopped, then its rows deleted in short steps), who started
-- it and why. The row goes in the transaction of the audit entry `company.erased`, which keeps
-- the company's id and how many items went (audit_log.items), and nothing else of the company.
CREATE TABLE company_erasures (
  company_id      INTEGER PRIMARY KEY,
  phase           TEXT NOT NULL CHECK (phase IN ('revoking', 'draining', 'deleting')),
  started_at      TEXT NOT NULL,
  keys_revoked_at TEXT,
  items           INTEGER,
  operator_id     TEXT NOT NULL,
  operator_email  TEXT NOT NULL,
  reason          TEXT NOT NULL
);

ALTER TABLE audit_log ADD COLUMN items INTEGER;
