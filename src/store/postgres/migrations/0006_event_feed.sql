-- The event feed (SPEC §11.2): every event of a company, whether or not its item has a
-- webhookUrl, kept EVENT_RETENTION_DAYS, in the order the events were committed.
--
-- Order: a sequence is not enough. A transaction that took id 7 may commit after one that took
-- id 8, and a reader that saw 8 and moved its cursor past it would never see 7. So each
-- company's events are numbered from its row in event_sequences, which the writing transaction
-- updates (and so holds) until it commits: the next writer of the same company gets its number
-- only after this one is visible, and positions are handed out in commit order. Only
-- event-writing transactions (the bot's) take that row, always as their last lock; intake
-- never does.

CREATE TABLE event_sequences (
  company_id    bigint PRIMARY KEY,
  last_position bigint NOT NULL
);

-- `data` is the work item view at the event, as the feed shows it (json: kept as written).
CREATE TABLE events (
  company_id   bigint NOT NULL,
  position     bigint NOT NULL,
  event_id     text NOT NULL,
  event_type   text NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried')),
  work_item_id bigint NOT NULL,
  created_at   timestamptz NOT NULL,
  data         json NOT NULL,
  PRIMARY KEY (company_id, position)
);
-- The feed's filters each seek straight to the page: by type, by item.
CREATE INDEX events_by_type ON events (company_id, event_type, position);
CREATE INDEX events_by_item ON events (company_id, work_item_id, position);
-- The retention sweep finds a company's oldest events.
CREATE INDEX events_by_age ON events (company_id, created_at);
