-- The console's Throughput chart and the bot's "Last hour" and "Today" (SPEC §16) count the items
-- that succeeded since a given instant; this partial index serves that range as the one of
-- failed items (work_items_failed_recently, 0009) serves the failures. Successful is terminal for
-- create items, so an item enters it once; intake's New items never do.
CREATE INDEX work_items_succeeded_recently ON work_items (completed_at, company_id) WHERE status = 'Successful';
