-- The trap of a restore (SPEC §18): a restored database's id sequence goes back, so an item added
-- after it can get the id of an item lost with the restore, and the authority would answer that
-- item's submit with the lost one's application, as a replay of the same idempotency key. Each item
-- keeps the generation of the store it was added in; the key is its id while the generation is 0
-- (so every item added before this migration, and every key already sent, stays the same), and the
-- id and the generation after a restore.
--
-- The generation rises when a process finds itself on a database other than the one recorded here:
-- another cluster or timeline (a base backup recovered to a point in time), or a work_items table
-- created anew (a pg_dump restored, into a new database or over the old one). It reaches every
-- insert through the column's default, so no intake statement names it. Not tenant data: one row.
CREATE TABLE store_generation (
  singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
  generation INTEGER NOT NULL,
  database_identity TEXT NOT NULL,
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO store_generation (generation, database_identity)
SELECT 0, (SELECT system_identifier FROM pg_control_system())::text || '/' ||
          (SELECT timeline_id FROM pg_control_checkpoint())::text || '/' ||
          'work_items'::regclass::oid::text;

ALTER TABLE work_items ADD COLUMN store_generation INTEGER NOT NULL DEFAULT 0;
