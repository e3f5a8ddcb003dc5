-- Restores, again (SPEC §24). A generation that only counts up comes back when the same dump is
-- restored twice: both restores raise it to the same number, so items added after the second got
-- the idempotency keys of items added after the first, which the authority had seen. A rise of
-- the generation now also gives it a random id (store-generation.ts); an item keeps the id of the
-- generation it was added in through the column's default, and its key carries it. At generation
-- 0 there is none, and an item's key stays its id (SPEC §5), as every release before keyed it.
--
-- The deployment id is made with the database and travels in its dumps. It is spliced in as a
-- constant: a reference table on Citus takes no volatile function in an UPDATE.
ALTER TABLE store_generation ADD COLUMN deployment_id TEXT;
ALTER TABLE store_generation ADD COLUMN generation_id TEXT;
ALTER TABLE work_items ADD COLUMN generation_id TEXT;
DO $$
BEGIN
  EXECUTE format('UPDATE store_generation SET deployment_id = %L', replace(gen_random_uuid()::text, '-', ''));
END
$$;
