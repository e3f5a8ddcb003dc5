-- Operators who sign in with the company's identity provider (SPEC §19). The PostgreSQL twin
-- explains each part.
ALTER TABLE operators ADD COLUMN sign_in_method TEXT NOT NULL DEFAULT 'password' CHECK (sign_in_method IN ('password', 'oidc'));

CREATE TABLE operator_identities (
  issuer      TEXT NOT NULL,
  subject     TEXT NOT NULL,
  operator_id TEXT NOT NULL REFERENCES operators (operator_id),
  created_at  TEXT NOT NULL,
  PRIMARY KEY (issuer, subject)
);

ALTER TABLE audit_log ADD COLUMN sign_in_method TEXT;
ALTER TABLE audit_log ADD COLUMN sign_in_issuer TEXT;
ALTER TABLE audit_log ADD COLUMN sign_in_subject TEXT;
