-- Restores, again (SPEC §24). A generation that only counts up comes back when the same dump is
-- restored twice: both restores raise it to the same number, so items added after the second got
-- the idempotency keys of items added after the first, which the authority had seen. And two
-- deployments both start at 0. A generation now also has a random id, made whenever the
-- generation rises and with a database made by this release (store-generation.ts); an item keeps
-- the id of the generation it was added in through the column's default, and its key carries it.
-- A database upgraded to this release has none until its generation next rises: a worker of the
-- previous release may file its items meanwhile, under the id alone, and an item's key must not
-- depend on which release files it. Items added without one keep the keys they always had.
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
