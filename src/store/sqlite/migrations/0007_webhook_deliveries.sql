-- Webhook deliveries (SPEC §11.3, §13). A delivery is an outbox row: it gets a numeric id an
-- integrator can name (delivery_id, in creation order), each of its attempts is kept in
-- webhook_delivery_attempts, and ended_at says when it was delivered or given up, for the
-- retention sweep. A company's webhook secret may have a previous one that still signs until
-- webhook_secret_previous_until (rotation with overlap); both columns hold ciphertext once the
-- process has started (src/webhooks/secrets.ts encrypts rows stored before, at start-up).
-- SQLite cannot add an INTEGER PRIMARY KEY to a table, so webhook_outbox is rebuilt (the
-- migration runs with foreign keys off and checks them before it commits).

ALTER TABLE companies ADD COLUMN webhook_secret_previous TEXT;
ALTER TABLE companies ADD COLUMN webhook_secret_previous_until TEXT;

CREATE TABLE webhook_outbox_new (
  delivery_id     INTEGER PRIMARY KEY,
  company_id      INTEGER NOT NULL,
  event_id        TEXT NOT NULL,
  work_item_id    INTEGER NOT NULL,
  event_type      TEXT NOT NULL
    CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried')),
  url             TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('Pending', 'Delivered', 'Failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  lease_owner     TEXT,
  last_status     INTEGER,
  last_error      TEXT,
  created_at      TEXT NOT NULL,
  delivered_at    TEXT,
  ended_at        TEXT,
  FOREIGN KEY (company_id, work_item_id) REFERENCES work_items (company_id, work_item_id)
);
-- A delivery that ended before this migration: delivered_at, or for one given up the end of the
-- lease its last attempt ran under (its next_attempt_at), the closest instant the row kept.
INSERT INTO webhook_outbox_new (company_id, event_id, work_item_id, event_type, url, status, attempts, next_attempt_at, lease_owner,
  last_status, last_error, created_at, delivered_at, ended_at)
SELECT company_id, event_id, work_item_id, event_type, url, status, attempts, next_attempt_at, lease_owner,
  last_status, last_error, created_at, delivered_at, CASE WHEN status = 'Pending' THEN NULL ELSE COALESCE(delivered_at, next_attempt_at) END
FROM webhook_outbox ORDER BY created_at, event_id;
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_new RENAME TO webhook_outbox;
CREATE UNIQUE INDEX webhook_outbox_by_event ON webhook_outbox (company_id, event_id);
CREATE UNIQUE INDEX webhook_outbox_by_company ON webhook_outbox (company_id, delivery_id);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at) WHERE status = 'Pending';
CREATE INDEX webhook_outbox_due_by_company ON webhook_outbox (company_id, next_attempt_at) WHERE status = 'Pending';
-- The Deliveries list: newest first per company, by status or by work item.
CREATE INDEX webhook_outbox_by_item ON webhook_outbox (company_id, work_item_id, delivery_id);
CREATE INDEX webhook_outbox_by_status ON webhook_outbox (company_id, status, delivery_id);
-- The retention sweep finds ended deliveries by age.
CREATE INDEX webhook_outbox_ended ON webhook_outbox (ended_at) WHERE ended_at IS NOT NULL;

-- One row per attempt, numbered from 1 per delivery; they go with their delivery.
CREATE TABLE webhook_delivery_attempts (
  company_id  INTEGER NOT NULL,
  delivery_id INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  at          TEXT NOT NULL,
  status_code INTEGER,
  error       TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (company_id, delivery_id, attempt),
  FOREIGN KEY (company_id, delivery_id) REFERENCES webhook_outbox (company_id, delivery_id) ON DELETE CASCADE
) WITHOUT ROWID;
