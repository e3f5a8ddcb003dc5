-- revision: 3
-- Intake of one group: the items of a group commit (store/postgres/appends.ts), each in a block of
-- its own, so text PostgreSQL cannot hold fails that item alone. Migrations 0001, 0005, 0016 and
-- 0018 defined it, each in full; from here on it is defined in this file only, and the migrator
-- applies it again when a release brings a new revision (store/postgres/repeatables.ts).
--
-- A new revision keeps the arguments and the result: during a rolling upgrade the previous
-- release's processes call it as they always did (SPEC §18), and an item of theirs carries no
-- trace_parent. A change of arguments is a new overload, made by a numbered migration first.
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
  violation text;
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
        -- A place in the Open batch, counted and held until commit. Taken by a write (revision 3),
        -- not SELECT … FOR UPDATE: Citus makes only writes wait for a shard move's cut-over, and a
        -- row lock taken by a read could be held on the old placement while the bot closed the
        -- batch on the new one, leaving this item in a batch already taken up. Under READ
        -- COMMITTED a batch that another transaction closed meanwhile fails the re-check and is
        -- skipped; none with room: a full one closes, and the next opens (the partial unique
        -- index turns a racing second Open batch into DO NOTHING). Then look again.
        attempt := 0;
        LOOP
          attempt := attempt + 1;
          IF attempt > 20 THEN
            RAISE EXCEPTION 'no Open batch for company % after % attempts', it.company_id, attempt - 1 USING ERRCODE = '40001';
          END IF;
          UPDATE work_batches b SET item_count = b.item_count + 1
           WHERE b.company_id = it.company_id AND b.work_type = it.work_type AND b.status = 'Open' AND b.item_count < it.batch_max_items
          RETURNING b.work_batch_id INTO open_batch;
          EXIT WHEN FOUND;
          UPDATE work_batches b SET status = 'Closed', closed_at = now()
           WHERE b.company_id = it.company_id AND b.work_type = it.work_type AND b.status = 'Open' AND b.item_count >= it.batch_max_items;
          INSERT INTO work_batches AS b (company_id, work_type, status, created_at)
          VALUES (it.company_id, it.work_type, 'Open', now())
          ON CONFLICT (company_id, work_type) WHERE status = 'Open' DO NOTHING;
        END LOOP;

        INSERT INTO work_items AS i (company_id, work_batch_id, work_type, status, customer_reference, document_reference,
                                     webhook_url, request, deadline_at, created_at, updated_at, trace_parent)
        VALUES (it.company_id, open_batch.work_batch_id, it.work_type, 'New', it.customer_reference, it.document_reference,
                it.webhook_url, requests[element_index]::json, it.deadline_at, now(), now(), it.trace_parent)
        RETURNING i.work_item_id INTO item_id;
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
        GET STACKED DIAGNOSTICS violated = CONSTRAINT_NAME, violation = MESSAGE_TEXT;
        -- Citus passes a worker's error on without its constraint name (revision 2): read it from the message.
        IF coalesce(violated, '') = '' THEN
          violated := substring(violation FROM 'unique constraint "([^"]+)"');
        END IF;
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
