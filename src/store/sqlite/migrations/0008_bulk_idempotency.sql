-- Bulk add (SPEC §11.1): the Idempotency-Key of a bulk request names its whole answer, not one
-- item. Such a record has no work_batch_id/work_item_id but a `response`, the answer as JSON
-- text: {"keys": [[workBatchId, workItemId], …], "refused": [{index, errors}, …]}
-- (src/store/core/bulk-answer.ts). SQLite cannot drop a NOT NULL, so the table is rebuilt; it
-- holds only the last 24 hours of keys.

CREATE TABLE idempotency_keys_new (
  company_id      INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_hash    TEXT NOT NULL,
  work_batch_id   INTEGER,
  work_item_id    INTEGER,
  response        TEXT,
  created_at      TEXT NOT NULL,
  PRIMARY KEY (company_id, idempotency_key),
  CHECK (work_item_id IS NOT NULL OR response IS NOT NULL)
) WITHOUT ROWID;
INSERT INTO idempotency_keys_new (company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at)
SELECT company_id, idempotency_key, request_hash, work_batch_id, work_item_id, created_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
