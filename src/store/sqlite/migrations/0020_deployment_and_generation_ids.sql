-- Restores, again (SPEC §24). A generation that only counts up comes back when the same copy is
-- restored twice: both restores raise it from the copy's 1 to 2, so items added after the second
-- got the idempotency keys of items added after the first, which the authority had seen. A
-- restore now also gives the generation a random id (store-generation.ts); an item keeps the id of
-- the generation it was added in, and its key carries it. At generation 0 there is none, and an
-- item's key stays its id (SPEC §5), as every release before keyed it.
--
-- The deployment id is made with the store and travels in its copies: `db restore` refuses a copy
-- of another deployment unless told it is meant, and then keys the copy's unfiled items anew.
ALTER TABLE store_generation ADD COLUMN deployment_id TEXT;
ALTER TABLE store_generation ADD COLUMN generation_id TEXT;
UPDATE store_generation SET deployment_id = lower(hex(randomblob(16)));
ALTER TABLE work_items ADD COLUMN generation_id TEXT;
