-- Item retention and erasure (SPEC §22).
--
-- An id never comes back. A table's INTEGER PRIMARY KEY is its rowid, and without AUTOINCREMENT
-- SQLite gives a new row the largest rowid + 1: once the rows with the largest ids are erased,
-- their ids would be given again (and, with an item's id, its idempotency key at the authority,
-- authority/protocol.ts). AUTOINCREMENT can only come with a rebuild of the table; instead an
-- erase records here, in its own transaction, the largest id it deleted of each table, and a new
-- row of work_items, work_batches or webhook_outbox takes the next id above it while the table's
-- own largest is below it (sqlite-port.ts, `newId`).
CREATE TABLE retired_ids (
  name  TEXT PRIMARY KEY CHECK (name IN ('work_items', 'work_batches', 'webhook_outbox')),
  up_to INTEGER NOT NULL
);

-- The item sweep finds a company's finished items by the time they finished, oldest first.
-- completed_at is set only in a final status (an operator's retry clears it again).
CREATE INDEX work_items_finished ON work_items (company_id, completed_at) WHERE completed_at IS NOT NULL;
