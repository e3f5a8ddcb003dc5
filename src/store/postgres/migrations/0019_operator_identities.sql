-- Operators who sign in with the company's identity provider (SPEC §19). The twin of
-- sqlite/migrations/0019_operator_identities.sql.
--
-- How an operator signs in. Existing operators have passwords; one made at its first OpenID
-- Connect sign-in gets an unusable password hash, so a release that knows nothing of this column
-- still refuses it a password sign-in.
ALTER TABLE operators ADD COLUMN sign_in_method text NOT NULL DEFAULT 'password' CHECK (sign_in_method IN ('password', 'oidc'));

-- The provider's name for an operator: its issuer and subject, never the e-mail, which a user
-- may change at the provider. A table of its own rather than two columns of operators: its
-- primary key is the lookup, and a unique index on the existing operators table could only be
-- built by blocking writes (docs/operations.md, "Rolling out a release").
CREATE TABLE operator_identities (
  issuer      text NOT NULL,
  subject     text NOT NULL,
  operator_id text NOT NULL REFERENCES operators (operator_id),
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (issuer, subject)
);

-- A sign-in's audit entry (action operator.signin) says how: password, or oidc with the issuer
-- and subject. Other actions leave these null.
ALTER TABLE audit_log ADD COLUMN sign_in_method text;
ALTER TABLE audit_log ADD COLUMN sign_in_issuer text;
ALTER TABLE audit_log ADD COLUMN sign_in_subject text;
