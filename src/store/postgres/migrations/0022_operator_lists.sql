-- The operators' list of work items as good as the console's (SPEC §25): the PostgreSQL twin of
-- sqlite/migrations/0022_operator_lists.sql. Built CONCURRENTLY, so writes go on meanwhile (the
-- migrator runs this file outside its transaction). Each index leaves out intake's New items
-- (status New, kind create, no webhook attempt), so that intake pays nothing for them.

-- The deadline order of every status but New, across companies and for one company: the New
-- items have their own index by deadline (migration 0011).
CREATE INDEX CONCURRENTLY IF NOT EXISTS work_items_by_status_deadline ON work_items (status, deadline_at, work_item_id) WHERE status <> 'New';
CREATE INDEX CONCURRENTLY IF NOT EXISTS work_items_by_company_status_deadline ON work_items (company_id, status, deadline_at, work_item_id) WHERE status <> 'New';
-- The changes and withdrawals across companies, newest first (one company's: migration 0013).
CREATE INDEX CONCURRENTLY IF NOT EXISTS work_items_by_kind_across ON work_items (kind, work_item_id) WHERE kind <> 'create';
-- The Throughput chart's webhook attempts that got no 2xx, by the hour they were made in.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_delivery_attempts_failed ON webhook_delivery_attempts (at, company_id) WHERE status_code IS NULL OR status_code NOT BETWEEN 200 AND 299;
