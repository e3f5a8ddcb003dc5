-- Operations (SPEC §12): the PostgreSQL twin of sqlite/migrations/0009_operations.sql (same
-- number, same tables and columns).
--
-- Operators are the staff who run the service; they see every company, so these tables are not
-- tenant data and carry no company_id (the audit log and the item history name the company
-- they are about). Passwords are scrypt hashes; tokens and session ids are SHA-256 of random
-- 256-bit values, so a copy of the database signs no one in.
CREATE TABLE operators (
  operator_id   text PRIMARY KEY,
  email         text NOT NULL UNIQUE,
  role          text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL,
  disabled_at   timestamptz
);

CREATE TABLE operator_tokens (
  token_hash  text PRIMARY KEY,
  operator_id text NOT NULL REFERENCES operators (operator_id),
  created_at  timestamptz NOT NULL
);
CREATE INDEX operator_tokens_by_operator ON operator_tokens (operator_id);

-- A console session: kept in the store so every API process accepts it; it ends after 8 h
-- without a request (last_seen_at), at sign-out, or when its operator is disabled.
CREATE TABLE operator_sessions (
  session_hash text PRIMARY KEY,
  operator_id  text NOT NULL REFERENCES operators (operator_id),
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL
);
CREATE INDEX operator_sessions_by_operator ON operator_sessions (operator_id);

-- Every operator action, kept forever; no statement of the service updates or deletes a row.
CREATE TABLE audit_log (
  audit_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at             timestamptz NOT NULL,
  operator_id    text NOT NULL,
  operator_email text NOT NULL,
  action         text NOT NULL,
  company_id     bigint,
  work_item_id   bigint,
  work_type      text,
  delivery_id    bigint,
  reason         text NOT NULL
);

-- A work type listed here is not filed by any worker (intake goes on).
CREATE TABLE bot_pauses (
  work_type  text PRIMARY KEY,
  paused_at  timestamptz NOT NULL
);

-- The last bot pass of any worker, for the overview.
CREATE TABLE bot_last_pass (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  started_at  timestamptz NOT NULL,
  finished_at timestamptz NOT NULL,
  submitted   integer NOT NULL,
  succeeded   integer NOT NULL,
  failed      integer NOT NULL,
  retried     integer NOT NULL
);

-- An item's history beyond its own row (SPEC §12.2 timeline): each state change, each call to
-- the authority with its answer, and each operator action on it. Its creation comes from the
-- item's created_at and its webhook attempts from webhook_delivery_attempts, so intake and the
-- dispatcher write nothing more.
CREATE TABLE work_item_history (
  company_id     bigint NOT NULL,
  work_item_id   bigint NOT NULL,
  entry_id       bigint GENERATED ALWAYS AS IDENTITY,
  at             timestamptz NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('status', 'attempt', 'operator')),
  status         text,
  detail         text,
  operator_id    text,
  operator_email text,
  reason         text,
  PRIMARY KEY (company_id, work_item_id, entry_id)
);

-- Item counts per company and status, kept by triggers so the overview reads a few thousand rows
-- instead of counting every item. New items are left out: intake inserts every item as New, one
-- statement per item, and a counter upsert for each cost PostgreSQL a third more CPU per added
-- item (docs/performance.md, Operations). The overview counts New items where it looks for the
-- oldest one, in the batches that can hold one (Open, Closed, Processing).
CREATE TABLE company_item_counts (
  company_id bigint NOT NULL,
  status     text NOT NULL,
  item_count bigint NOT NULL,
  PRIMARY KEY (company_id, status)
);
INSERT INTO company_item_counts (company_id, status, item_count)
  SELECT company_id, status, count(*) FROM work_items WHERE status <> 'New' GROUP BY company_id, status;

-- A row trigger with WHEN: PostgreSQL checks the condition without calling the function, so
-- intake's New items cost nothing here.
CREATE FUNCTION wia_count_inserted_item() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO company_item_counts AS c (company_id, status, item_count) VALUES (NEW.company_id, NEW.status, 1)
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = c.item_count + 1;
  RETURN NULL;
END $$;
CREATE TRIGGER work_items_counted_on_insert AFTER INSERT ON work_items
  FOR EACH ROW WHEN (NEW.status <> 'New') EXECUTE FUNCTION wia_count_inserted_item();

-- Statement-level with transition tables: the bot moves many items in one statement, which makes
-- one upsert per company and status it touched, not one per row. Most updates (a poll, a deadline
-- flag) leave the status as it is: those net to zero and touch no counter row.
CREATE FUNCTION wia_count_updated_items() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO company_item_counts AS c (company_id, status, item_count)
    SELECT company_id, status, sum(delta) FROM (
      SELECT company_id, status, -1 AS delta FROM items_before WHERE status <> 'New'
      UNION ALL
      SELECT company_id, status, 1 AS delta FROM items_after WHERE status <> 'New'
    ) changes
    GROUP BY company_id, status HAVING sum(delta) <> 0 ORDER BY company_id, status
    ON CONFLICT (company_id, status) DO UPDATE SET item_count = c.item_count + excluded.item_count;
  RETURN NULL;
END $$;
CREATE TRIGGER work_items_counted_on_update AFTER UPDATE ON work_items
  REFERENCING OLD TABLE AS items_before NEW TABLE AS items_after FOR EACH STATEMENT EXECUTE FUNCTION wia_count_updated_items();

-- The operator's cross-company pages: newest first overall, by status, by the authority's numbers
-- (set only once filed, so intake pays nothing for those two), and recent failures per company.
CREATE INDEX work_items_newest ON work_items (work_item_id);
CREATE INDEX work_items_by_status_across ON work_items (status, work_item_id);
CREATE INDEX work_items_by_application_number ON work_items (application_number) WHERE application_number IS NOT NULL;
CREATE INDEX work_items_by_registration_number ON work_items (registration_number) WHERE registration_number IS NOT NULL;
-- The overview counts the last day's failures per company from this index alone.
CREATE INDEX work_items_failed_recently ON work_items (completed_at, company_id) WHERE status = 'Failed';
-- The operator names a delivery by its id alone.
CREATE INDEX webhook_outbox_by_delivery_id ON webhook_outbox (delivery_id);
