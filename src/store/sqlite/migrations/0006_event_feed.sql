-- The event feed (SPEC §11.2): every event of a company, whether or not its item has a
-- webhookUrl, kept EVENT_RETENTION_DAYS, in the order the events were committed. The
-- PostgreSQL twin explains event_sequences; here the single writer alone would keep the order,
-- and the same statements number the events on both stores.

CREATE TABLE event_sequences (
  company_id    INTEGER PRIMARY KEY,
  last_position INTEGER NOT NULL
);

-- `data` is the work item view at the event, as the feed shows it. A rowid table: the rows are
-- large (the view), so the feed's index leads to them instead of holding them.
CREATE TABLE events (
  company_id   INTEGER NOT NULL,
  position     INTEGER NOT NULL,
  event_id     TEXT NOT NULL,
  event_type   TEXT NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried')),
  work_item_id INTEGER NOT NULL,
  created_at   TEXT NOT NULL,
  data         TEXT NOT NULL
);
CREATE UNIQUE INDEX events_by_position ON events (company_id, position);
-- The feed's filters each seek straight to the page: by type, by item.
CREATE INDEX events_by_type ON events (company_id, event_type, position);
CREATE INDEX events_by_item ON events (company_id, work_item_id, position);
-- The retention sweep finds a company's oldest events.
CREATE INDEX events_by_age ON events (company_id, created_at);
