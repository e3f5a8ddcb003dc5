-- revision: 1
-- A bulk add (store/postgres/appends.ts): one transaction for all its items, in as many Open
-- batches as they fill. Migrations 0008 and 0018 defined it, each in full; from here on it is
-- defined in this file only, and the migrator applies it again when a release brings a new
-- revision (store/postgres/repeatables.ts).
--
-- Revision 1 holds the Open batch by a write, not SELECT … FOR UPDATE: on Citus only a write waits
-- for a shard move's cut-over (docs/scaling.md §3.7).
--
-- A new revision keeps the arguments and the result: during a rolling upgrade the previous
-- release's processes call it as they always did (SPEC §18).
CREATE OR REPLACE FUNCTION wia_add_work_item_bulk(
  p_company_id bigint, p_work_type text, p_batch_max_items integer,
  p_customer_references text[], p_document_references text[], p_webhook_urls text[], p_requests text[], p_deadlines timestamptz[],
  p_idempotency_key text, p_request_hash text, p_retention_seconds integer, p_refused json, p_trace_parent text)
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
      -- Insert-or-select the Open batch, held until commit by a write that changes nothing: on
      -- Citus only a write waits for a shard move's cut-over (see wia_add_work_items).
      attempt := 0;
      LOOP
        attempt := attempt + 1;
        IF attempt > 20 THEN
          RAISE EXCEPTION 'no Open batch for company % after % attempts', p_company_id, attempt - 1 USING ERRCODE = '40001';
        END IF;
        UPDATE work_batches b SET company_id = b.company_id
         WHERE b.company_id = p_company_id AND b.work_type = p_work_type AND b.status = 'Open'
        RETURNING b.work_batch_id, b.item_count INTO open_batch;
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
                              webhook_url, request, deadline_at, created_at, updated_at, trace_parent)
      OVERRIDING SYSTEM VALUE
      SELECT ids[n - done], p_company_id, open_batch.work_batch_id, p_work_type, 'New', p_customer_references[n], p_document_references[n],
             p_webhook_urls[n], p_requests[n]::json, p_deadlines[n], now(), now(), p_trace_parent
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
