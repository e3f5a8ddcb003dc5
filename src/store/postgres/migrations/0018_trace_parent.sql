-- One trace per item (SPEC §17): each item keeps the W3C trace context of its intake, so the
-- bot's authority calls and the webhook deliveries about it are spans of the same trace. NULL when
-- tracing is off, and for the items of a release before this one.
ALTER TABLE work_items ADD COLUMN trace_parent text;

-- Intake of one group (0016), with one change: each item's trace context, from its JSON. The
-- function keeps its arguments, so a previous release's processes, whose items carry none, go on
-- calling it during a rolling upgrade.
CREATE OR REPLACE FUNCTION wia_add_work_items(items json, requests text[])
RETURNS TABLE (item_ord integer, outcome text, batch_id bigint, item_id bigint, failure_code text, failure_message text)
LANGUAGE plpgsql AS $$
DECLARE
  element json;
  element_index bigint;
  it record;
  open_batch record;
  previous record;
  attempt integer;
  violated text;
BEGIN
  -- Fields are read inside each item's block: text that PostgreSQL cannot hold (U+0000, an
  -- unpaired surrogate) then fails that item alone instead of the whole group.
  FOR element, element_index IN SELECT e.value, e.ordinality FROM json_array_elements(items) WITH ORDINALITY AS e
  LOOP
    item_ord := element_index - 1; outcome := NULL; batch_id := NULL; item_id := NULL; failure_code := NULL; failure_message := NULL;
    BEGIN
      SELECT * INTO it FROM json_to_record(element) AS x(
        company_id bigint, work_type text, customer_reference text, document_reference text, webhook_url text,
        batch_max_items integer, idempotency_key text, request_hash text, retention_seconds integer, deadline_at timestamptz,
        trace_parent text);
      IF it.idempotency_key IS NOT NULL THEN
        SELECT k.request_hash, k.work_batch_id, k.work_item_id, k.created_at INTO previous
          FROM idempotency_keys k WHERE k.company_id = it.company_id AND k.idempotency_key = it.idempotency_key;
        IF FOUND AND previous.created_at + make_interval(secs => it.retention_seconds) > now() THEN
          IF previous.request_hash = it.request_hash THEN
            outcome := 'replayed'; batch_id := previous.work_batch_id; item_id := previous.work_item_id;
          ELSE
            outcome := 'keyReused';
          END IF;
        ELSIF FOUND THEN
          -- Expired: the key may be used again for a new item.
          DELETE FROM idempotency_keys k WHERE k.company_id = it.company_id AND k.idempotency_key = it.idempotency_key;
        END IF;
      END IF;

      IF outcome IS NULL THEN
        -- Insert-or-select the Open batch, locked until commit. Under READ COMMITTED a row
        -- that another transaction closed meanwhile fails the re-check and is skipped, and the
        -- partial unique index turns a racing second Open batch into DO NOTHING: loop and look again.
        attempt := 0;
        LOOP
          attempt := attempt + 1;
          IF attempt > 20 THEN
            RAISE EXCEPTION 'no Open batch for company % after % attempts', it.company_id, attempt - 1 USING ERRCODE = '40001';
          END IF;
          SELECT b.work_batch_id, b.item_count INTO open_batch
            FROM work_batches b
           WHERE b.company_id = it.company_id AND b.work_type = it.work_type AND b.status = 'Open'
             FOR UPDATE;
          EXIT WHEN FOUND AND open_batch.item_count < it.batch_max_items;
          IF FOUND THEN
            UPDATE work_batches b SET status = 'Closed', closed_at = now()
             WHERE b.company_id = it.company_id AND b.work_batch_id = open_batch.work_batch_id;
          END IF;
          INSERT INTO work_batches AS b (company_id, work_type, status, created_at)
          VALUES (it.company_id, it.work_type, 'Open', now())
          ON CONFLICT (company_id, work_type) WHERE status = 'Open' DO NOTHING
          RETURNING b.work_batch_id, b.item_count INTO open_batch;
          EXIT WHEN FOUND;
        END LOOP;

        INSERT INTO work_items AS i (company_id, work_batch_id, work_type, status, customer_reference, document_reference,
                                     webhook_url, request, deadline_at, created_at, updated_at, trace_parent)
        VALUES (it.company_id, open_batch.work_batch_id, it.work_type, 'New', it.customer_reference, it.document_reference,
                it.webhook_url, requests[element_index]::json, it.deadline_at, now(), now(), it.trace_parent)
        RETURNING i.work_item_id INTO item_id;
        UPDATE work_batches b SET item_count = b.item_count + 1
         WHERE b.company_id = it.company_id AND b.work_batch_id = open_batch.work_batch_id;
        IF it.idempotency_key IS NOT NULL THEN
          -- A racing transaction with the same key blocks here until it ends, then this raises
          -- unique_violation: the handler below rolls this item back and answers with the winner's.
          INSERT INTO idempotency_keys (company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at)
          VALUES (it.company_id, it.idempotency_key, it.request_hash, open_batch.work_batch_id, item_id, now());
        END IF;
        outcome := 'created'; batch_id := open_batch.work_batch_id;
      END IF;
    EXCEPTION
      WHEN unique_violation THEN
        GET STACKED DIAGNOSTICS violated = CONSTRAINT_NAME;
        item_id := NULL;
        SELECT k.request_hash, k.work_batch_id, k.work_item_id INTO previous
          FROM idempotency_keys k WHERE k.company_id = it.company_id AND k.idempotency_key = it.idempotency_key;
        -- On Citus the constraint is named after the shard that refused the row: idempotency_keys_pkey_102008.
        IF violated ~ '^idempotency_keys_pkey(_[0-9]+)?$' AND FOUND THEN
          IF previous.request_hash = it.request_hash THEN
            outcome := 'replayed'; batch_id := previous.work_batch_id; item_id := previous.work_item_id;
          ELSE
            outcome := 'keyReused'; batch_id := NULL;
          END IF;
        ELSE
          outcome := 'failed'; batch_id := NULL; failure_code := SQLSTATE; failure_message := SQLERRM;
        END IF;
      WHEN OTHERS THEN
        outcome := 'failed'; batch_id := NULL; item_id := NULL; failure_code := SQLSTATE; failure_message := SQLERRM;
    END;
    RETURN NEXT;
  END LOOP;
END
$$;

-- A bulk add (0008) with its request's trace context, one for all its items. A new overload: the
-- previous release's processes go on calling the one without it until a later release removes it.
CREATE FUNCTION wia_add_work_item_bulk(
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
