-- The lifecycle after intake: the bot's batch leases and retries, and the webhook outbox. The
-- PostgreSQL twin of sqlite/migrations/0002_lifecycle.sql (same number, same columns).
-- work_batches already has lease_owner/lease_expires_at; work_items already has attempts,
-- next_attempt_at and last_error.

-- A Processing batch whose lease was released with items still waiting for a retry sleeps
-- until next_run_at (the earliest next_attempt_at of its items); last_error is why the
-- previous run of it stopped early, if it did.
ALTER TABLE work_batches ADD COLUMN next_run_at timestamptz;
ALTER TABLE work_batches ADD COLUMN last_error text;
-- The bot's claim looks across companies for the oldest Closed or sleeping Processing batch.
CREATE INDEX work_batches_claimable ON work_batches (status, work_batch_id) WHERE status IN ('Closed', 'Processing');

-- One row per webhook event, written in the same transaction as the item's terminal status.
-- next_attempt_at doubles as the lease: a claim pushes it forward by the lease time, so a
-- dispatcher that dies mid-delivery leaves the row due again once the lease is over.
-- Tenant-ready like every table: company_id leads the primary key (see 0001).
CREATE TABLE webhook_outbox (
  company_id      bigint NOT NULL,
  event_id        text NOT NULL,
  work_item_id    bigint NOT NULL,
  event_type      text NOT NULL CHECK (event_type IN ('workitem.succeeded', 'workitem.failed')),
  url             text NOT NULL,
  status          text NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  lease_owner     text,
  last_status     integer,
  last_error      text,
  created_at      timestamptz NOT NULL,
  delivered_at    timestamptz,
  PRIMARY KEY (company_id, event_id),
  FOREIGN KEY (company_id, work_item_id) REFERENCES work_items (company_id, work_item_id)
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_by_item ON webhook_outbox (company_id, work_item_id);
