-- The trap of a restore (SPEC §18): a restored store's id sequence goes back, so an item added after
-- it can get the id of an item lost with the restore, and the authority would answer that item's
-- submit with the lost one's application, as a replay of the same idempotency key. Each item keeps
-- the generation of the store it was added in; the key is its id while the generation is 0 (so
-- every item added before this migration, and every key already sent, stays the same), and the id
-- and the generation after a restore. `db restore` raises the generation of the copy it puts in place.
CREATE TABLE store_generation (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  generation INTEGER NOT NULL,
  changed_at TEXT NOT NULL
);

INSERT INTO store_generation (singleton, generation, changed_at) VALUES (1, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

ALTER TABLE work_items ADD COLUMN store_generation INTEGER NOT NULL DEFAULT 0;
