-- Bulk add (SPEC §11.1). The PostgreSQL twin of sqlite/migrations/0008_bulk_idempotency.sql.
--
-- The Idempotency-Key of a bulk request names its whole answer, not one item: such a record has
-- no work_batch_id/work_item_id but a `response`, {"keys": [[workBatchId, workItemId], …],
-- "refused": [{index, errors}, …]} (src/store/core/bulk-answer.ts). Dropping NOT NULL and adding
-- a nullable column change only the catalogue; every existing row has its ids, so the check
-- needs no scan (NOT VALID still holds every new row to it).
ALTER TABLE idempotency_keys
  ALTER COLUMN work_batch_id DROP NOT NULL,
  ALTER COLUMN work_item_id DROP NOT NULL,
  ADD COLUMN response json;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_names_an_answer
  CHECK (work_item_id IS NOT NULL OR response IS NOT NULL) NOT VALID;

-- Intake of one bulk add: many items of one company and work type, in the caller's transaction,
-- all of them or none (one call is one group of the group-commit lane of its company).
--
-- The items come as parallel arrays, item n at index n of each (requests as JSON text, see
-- wia_add_work_items). They fill the company's Open batch in order; when it holds
-- p_batch_max_items it is closed and the next one opens, as for single adds, so one call may
-- span batches. Each batch's share is one INSERT of its items with ids taken from the identity
-- sequence beforehand, so item n gets ids[n] whatever order the rows are written in, and one
-- item_count update.
--
-- With a key: a fresh record with the same hash and an answer → 'replayed' with that answer;
-- any other fresh record → 'keyReused'; an expired one is deleted. A racing call with the same
-- key (another process) blocks on the key's insert until the winner commits; then this call's
-- items are rolled back (the block below is a savepoint) and the winner's answer is given.
-- One row comes back: outcome 'created' | 'replayed' | 'keyReused', and the answer.
CREATE FUNCTION wia_add_work_item_bulk(
  p_company_id bigint, p_work_type text, p_batch_max_items integer,
  p_customer_references text[], p_document_references text[], p_webhook_urls text[], p_requests text[], p_deadlines timestamptz[],
  p_idempotency_key text, p_request_hash text, p_retention_seconds integer, p_refused json)
RETURNS TABLE (outcome text, answer json)
LANGUAGE plpgsql AS $$
DECLARE
  total integer := coalesce(array_length(p_requests, 1), 0);
  done integer := 0;
  take integer;
  open_batch record;
  previous record;
  attempt integer;
  ids bigint[];
  keys json[] := '{}';
BEGIN
  IF p_idempotency_key IS NOT NULL THEN
    SELECT k.request_hash, k.response, k.created_at INTO previous
      FROM idempotency_keys k WHERE k.company_id = p_company_id AND k.idempotency_key = p_idempotency_key;
    IF FOUND AND previous.created_at + make_interval(secs => p_retention_seconds) > now() THEN
      IF previous.request_hash = p_request_hash AND previous.response IS NOT NULL THEN
        RETURN QUERY SELECT 'replayed'::text, previous.response;
      ELSE
        RETURN QUERY SELECT 'keyReused'::text, NULL::json;
      END IF;
      RETURN;
    ELSIF FOUND THEN
      DELETE FROM idempotency_keys k WHERE k.company_id = p_company_id AND k.idempotency_key = p_idempotency_key;
    END IF;
  END IF;

  BEGIN
    WHILE done < total LOOP
      -- Insert-or-select the Open batch, locked until commit (as in wia_add_work_items).
      attempt := 0;
      LOOP
        attempt := attempt + 1;
        IF attempt > 20 THEN
          RAISE EXCEPTION 'no Open batch for company % after % attempts', p_company_id, attempt - 1 USING ERRCODE = '40001';
        END IF;
        SELECT b.work_batch_id, b.item_count INTO open_batch
          FROM work_batches b
         WHERE b.company_id = p_company_id AND b.work_type = p_work_type AND b.status = 'Open'
           FOR UPDATE;
        EXIT WHEN FOUND AND open_batch.item_count < p_batch_max_items;
        IF FOUND THEN
          UPDATE work_batches b SET status = 'Closed', closed_at = now()
           WHERE b.company_id = p_company_id AND b.work_batch_id = open_batch.work_batch_id;
        END IF;
        INSERT INTO work_batches AS b (company_id, work_type, status, created_at)
        VALUES (p_company_id, p_work_type, 'Open', now())
        ON CONFLICT (company_id, work_type) WHERE status = 'Open' DO NOTHING
        RETURNING b.work_batch_id, b.item_count INTO open_batch;
        EXIT WHEN FOUND;
      END LOOP;

      take := least(p_batch_max_items - open_batch.item_count, total - done);
      ids := ARRAY(SELECT nextval(pg_get_serial_sequence('work_items', 'work_item_id')) AS id FROM generate_series(1, take) ORDER BY id);
      INSERT INTO work_items (work_item_id, company_id, work_batch_id, work_type, status, customer_reference, document_reference,
                              webhook_url, request, deadline_at, created_at, updated_at)
      OVERRIDING SYSTEM VALUE
      SELECT ids[n - done], p_company_id, open_batch.work_batch_id, p_work_type, 'New', p_customer_references[n], p_document_references[n],
             p_webhook_urls[n], p_requests[n]::json, p_deadlines[n], now(), now()
        FROM generate_series(done + 1, done + take) AS n;
      UPDATE work_batches b SET item_count = b.item_count + take
       WHERE b.company_id = p_company_id AND b.work_batch_id = open_batch.work_batch_id;
      keys := keys || ARRAY(SELECT json_build_array(open_batch.work_batch_id, ids[i]) FROM generate_series(1, take) AS i ORDER BY i);
      done := done + take;
    END LOOP;

    answer := json_build_object('keys', to_json(keys), 'refused', coalesce(p_refused, '[]'::json));
    IF p_idempotency_key IS NOT NULL THEN
      INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, response, created_at)
      VALUES (p_company_id, p_idempotency_key, p_request_hash, answer, now());
    END IF;
  EXCEPTION
    WHEN unique_violation THEN
      SELECT k.request_hash, k.response INTO previous
        FROM idempotency_keys k WHERE k.company_id = p_company_id AND k.idempotency_key = p_idempotency_key;
      IF NOT FOUND THEN
        RAISE;
      END IF;
      IF previous.request_hash = p_request_hash AND previous.response IS NOT NULL THEN
        RETURN QUERY SELECT 'replayed'::text, previous.response;
      ELSE
        RETURN QUERY SELECT 'keyReused'::text, NULL::json;
      END IF;
      RETURN;
  END;
  RETURN QUERY SELECT 'created'::text, answer;
END
$$;
