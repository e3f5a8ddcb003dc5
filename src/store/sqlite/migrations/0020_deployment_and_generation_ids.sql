-- Restores, again (SPEC §24). A generation that only counts up comes back when the same copy is
-- restored twice: both restores raise it from the copy's 1 to 2, so items added after the second
-- got the idempotency keys of items added after the first, which the authority had seen. And two
-- deployments both start at 0, so a copy of one restored into the other filed its items under the
-- keys of the other's. A generation now also has a random id, made by every restore, and with
-- a store made by this release (store-generation.ts); an item keeps the id of the generation it was
-- added in, and its key carries it. A store upgraded to this release has none until its next
-- restore: a worker of the previous release may file its items meanwhile, under the id alone, and
-- an item's key must not depend on which release files it. Items added without one keep the keys
-- they always had.
--
-- The deployment id is made with the store and travels in its copies: `db restore` refuses a copy
-- of another deployment unless told it is meant.
ALTER TABLE store_generation ADD COLUMN deployment_id TEXT;
ALTER TABLE store_generation ADD COLUMN generation_id TEXT;
UPDATE store_generation SET deployment_id = lower(hex(randomblob(16)));
ALTER TABLE work_items ADD COLUMN generation_id TEXT;
