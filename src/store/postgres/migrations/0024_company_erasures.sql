-- A company that leaves (SPEC §22): an erase under way, and the number of items an erase took in
-- its audit entry; see sqlite/migrations/0024_company_erasures.sql. company_erasures belongs to
-- the operators, as the audit log does: a reference table on Citus (distribution.ts), written
-- only by an erase, never on the hot path.
CREATE TABLE company_erasures (
  company_id      bigint PRIMARY KEY,
  phase           text NOT NULL CHECK (phase IN ('revoking', 'draining', 'deleting')),
  started_at      timestamptz NOT NULL,
  keys_revoked_at timestamptz,
  items           bigint,
  operator_id     text NOT NULL,
  operator_email  text NOT NULL,
  reason          text NOT NULL
);

ALTER TABLE audit_log ADD COLUMN items bigint;
