-- The console's Throughput chart and the bot's "Last hour" and "Today" (SPEC §16): the items that
-- succeeded since an instant; see postgres/migrations/0015_console_activity.sql.
CREATE INDEX work_items_succeeded_recently ON work_items (completed_at, company_id) WHERE status = 'Successful';
