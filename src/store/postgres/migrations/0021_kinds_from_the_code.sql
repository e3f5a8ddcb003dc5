-- From this migration on, the `kind` CHECKs of work_items and work_item_history take the kinds
-- the code names, widened by the migrator after the numbered migrations (kind-checks.ts), so a
-- new kind of work item needs no migration. PostgreSQL alters a CHECK in place, so its CHECKs
-- stay as 0013 left them until then; the SQLite twin rebuilds its two tables. This file keeps the
-- two stores' migration numbers in step.
SELECT 1;
