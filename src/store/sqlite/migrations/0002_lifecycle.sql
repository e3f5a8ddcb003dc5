-- The lifecycle after intake: the bot's batch leases and retries, and the webhook outbox.
-- work_batches already has lease_owner/lease_expires_at; work_items already has attempts,
-- next_attempt_at and last_error.

-- A Processing batch whose lease was released with items still waiting for a retry sleeps
-- until next_run_at (the earliest next_attempt_at of its items); last_error is why the
-- previous run of it stopped early, if it did.
ALTER TABLE work_batches ADD COLUMN next_run_at TEXT;
ALTER TABLE work_batches ADD COLUMN last_error TEXT;
CREATE INDEX work_batches_claimable ON work_batches (status, work_batch_id) WHERE status IN ('Closed', 'Processing');

-- One row per webhook event, written in the same transaction as the item's terminal status.
-- next_attempt_at doubles as the lease: a claim pushes it forward by the lease time, so a
-- dispatcher that dies mid-delivery leaves the row due again once the lease is over.
CREATE TABLE webhook_outbox (
  company_id      INTEGER NOT NULL,
  event_id        TEXT NOT NULL,
  work_item_id    INTEGER NOT NULL,
  event_type      TEXT NOT NULL CHECK (event_type IN ('workitem.succeeded', 'workitem.failed')),
  url             TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner     TEXT,
  last_status     INTEGER,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  delivered_at    TEXT,
  PRIMARY KEY (company_id, event_id),
  FOREIGN KEY (company_id, work_item_id) REFERENCES work_items (company_id, work_item_id)
) WITHOUT ROWID;
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_by_item ON webhook_outbox (company_id, work_item_id);
