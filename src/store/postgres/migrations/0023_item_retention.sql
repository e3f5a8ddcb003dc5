-- Item retention (SPEC §22): the item sweep finds a company's finished items by the time they
-- finished, oldest first. completed_at is set only in a final status (an operator's retry clears
-- it again). Built CONCURRENTLY: intake and the bot go on writing while it builds.
--
-- Unlike SQLite's rowids, the identity sequences of work_items, work_batches and webhook_outbox
-- never give an id twice, so erased ids need no record here (see sqlite/migrations/0023).
CREATE INDEX CONCURRENTLY IF NOT EXISTS work_items_finished ON work_items (company_id, completed_at) WHERE completed_at IS NOT NULL;
