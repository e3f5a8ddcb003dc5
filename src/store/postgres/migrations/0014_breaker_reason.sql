-- Not tenant data. Why the breaker is open when not for failures in a row: the authority refused
-- our calls themselves (401, 403, 404 or 405 at submit), which operators must put right.
ALTER TABLE authority_breakers ADD COLUMN reason text;
