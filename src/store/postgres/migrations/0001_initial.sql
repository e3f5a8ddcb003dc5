-- Companies, their API keys, batches, items and idempotency records: the PostgreSQL twin of
-- sqlite/migrations/0001_initial.sql (same number, same tables and columns).
--
-- Tenant-ready: every tenant table carries company_id, and company_id leads every primary key
-- and unique index, so the tables can be distributed by company_id (e.g. Citus
-- create_distributed_table(..., 'company_id')) without changing a query. Ids come from identity
-- columns; they are unique on their own, but the keys still include company_id because a
-- distributed table can only enforce uniqueness that includes the distribution column.

CREATE TABLE companies (
  company_id     bigint PRIMARY KEY CHECK (company_id > 0),
  name           text NOT NULL,
  webhook_secret text,
  created_at     timestamptz NOT NULL
);

CREATE TABLE api_keys (
  company_id  bigint NOT NULL REFERENCES companies (company_id),
  key_id      text NOT NULL,
  name        text,
  secret_hash text NOT NULL,
  created_at  timestamptz NOT NULL,
  revoked_at  timestamptz,
  PRIMARY KEY (company_id, key_id)
);
-- The admin CLI revokes by key id alone (not unique on purpose: uniqueness is per company).
CREATE INDEX api_keys_by_key_id ON api_keys (key_id);

CREATE TABLE work_batches (
  company_id       bigint NOT NULL REFERENCES companies (company_id),
  work_batch_id    bigint GENERATED ALWAYS AS IDENTITY,
  work_type        text NOT NULL,
  status           text NOT NULL CHECK (status IN ('Open', 'Closed', 'Processing', 'Completed')),
  item_count       integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  closed_at        timestamptz,
  completed_at     timestamptz,
  lease_owner      text,
  lease_expires_at timestamptz,
  PRIMARY KEY (company_id, work_batch_id)
) WITH (fillfactor = 70); -- room on the page for the item_count bump of every append (HOT updates)
-- At most one Open batch per company and work type, enforced by the database itself; intake
-- relies on it with INSERT ... ON CONFLICT DO NOTHING (insert-or-select).
CREATE UNIQUE INDEX work_batches_one_open ON work_batches (company_id, work_type) WHERE status = 'Open';
CREATE INDEX work_batches_by_status ON work_batches (status, company_id);

CREATE TABLE work_items (
  company_id         bigint NOT NULL,
  work_item_id       bigint GENERATED ALWAYS AS IDENTITY,
  work_batch_id      bigint NOT NULL,
  work_type          text NOT NULL,
  status             text NOT NULL CHECK (status IN ('New', 'InProgress', 'Successful', 'Failed', 'Cancelled')),
  customer_reference text NOT NULL,
  document_reference text,
  webhook_url        text,
  -- json, not jsonb: the request comes back exactly as stored (property order included).
  request            json NOT NULL,
  result             json,
  error              json,
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz,
  last_error         text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  completed_at       timestamptz,
  PRIMARY KEY (company_id, work_item_id),
  FOREIGN KEY (company_id, work_batch_id) REFERENCES work_batches (company_id, work_batch_id)
);
CREATE INDEX work_items_by_batch ON work_items (company_id, work_batch_id, work_item_id);
CREATE INDEX work_items_by_status ON work_items (company_id, status, work_item_id);
CREATE INDEX work_items_by_reference ON work_items (company_id, customer_reference, work_item_id);

CREATE TABLE idempotency_keys (
  company_id      bigint NOT NULL,
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  work_batch_id   bigint NOT NULL,
  work_item_id    bigint NOT NULL,
  created_at      timestamptz NOT NULL,
  PRIMARY KEY (company_id, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

-- Process-wide secrets every process sharing the database must agree on (the generated HS256
-- key when JWT_SECRET is unset). Not tenant data: a reference table under Citus.
CREATE TABLE signing_secrets (
  name       text PRIMARY KEY,
  secret     text NOT NULL,
  created_at timestamptz NOT NULL
);

-- Intake of one group of work items (group commit), in the caller's transaction.
--
-- `items` is a JSON array of {company_id, work_type, customer_reference, document_reference,
-- webhook_url, batch_max_items, idempotency_key, request_hash, retention_seconds}, and
-- `requests` holds each item's request body as JSON text (apart, because reading fields out of
-- `items` decodes every string in it, and PostgreSQL text cannot hold an escaped U+0000 that
-- a json column keeps verbatim). Items come sorted by (company_id, work_type), so that concurrent groups lock Open batches in one order
-- and cannot deadlock. Each item runs in its own subtransaction (the BEGIN ... EXCEPTION block
-- is a savepoint): one item's failure rolls back only that item and is returned as a row,
-- while the others commit together. One row per item comes back, item_ord being its index:
--   created | replayed (with batch and item id), keyReused, or failed (with SQLSTATE).
CREATE FUNCTION wia_add_work_items(items json, requests text[])
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
        batch_max_items integer, idempotency_key text, request_hash text, retention_seconds integer);
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
                                     webhook_url, request, created_at, updated_at)
        VALUES (it.company_id, open_batch.work_batch_id, it.work_type, 'New', it.customer_reference, it.document_reference,
                it.webhook_url, requests[element_index]::json, now(), now())
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
        IF violated = 'idempotency_keys_pkey' AND FOUND THEN
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
