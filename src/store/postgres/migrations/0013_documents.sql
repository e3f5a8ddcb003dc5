-- Changing and withdrawing a filed document (SPEC §15): a work item has a kind (create, change
-- or withdraw); a change or withdrawal names its original; a create counts the changes applied
-- to it; Withdrawn is a terminal state of a create. The SQLite twin rebuilds its tables instead.

ALTER TABLE work_items DROP CONSTRAINT work_items_status_check;
ALTER TABLE work_items ADD CONSTRAINT work_items_status_check
  CHECK (status IN ('New', 'InProgress', 'Submitted', 'Successful', 'Failed', 'Cancelled', 'Withdrawn'));
ALTER TABLE work_items
  ADD COLUMN kind text NOT NULL DEFAULT 'create' CHECK (kind IN ('create', 'change', 'withdraw')),
  ADD COLUMN original_work_item_id bigint,
  -- A create: the changes applied to its document so far.
  ADD COLUMN revision integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT work_items_original_by_kind CHECK ((kind = 'create') = (original_work_item_id IS NULL)),
  ADD CONSTRAINT work_items_original_fkey FOREIGN KEY (company_id, original_work_item_id) REFERENCES work_items (company_id, work_item_id);
-- An original's changes and withdrawals, in intake order; and the kind= filter of the list.
CREATE INDEX work_items_by_original ON work_items (company_id, original_work_item_id, work_item_id) WHERE original_work_item_id IS NOT NULL;
CREATE INDEX work_items_by_kind ON work_items (company_id, kind, work_item_id) WHERE kind <> 'create';

ALTER TABLE events DROP CONSTRAINT events_event_type_check;
ALTER TABLE events ADD CONSTRAINT events_event_type_check
  CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried',
                        'workitem.changed', 'workitem.withdrawn'));
ALTER TABLE webhook_outbox DROP CONSTRAINT webhook_outbox_event_type_check;
ALTER TABLE webhook_outbox ADD CONSTRAINT webhook_outbox_event_type_check
  CHECK (event_type IN ('workitem.submitted', 'workitem.succeeded', 'workitem.failed', 'workitem.deadline_at_risk', 'workitem.retried',
                        'workitem.changed', 'workitem.withdrawn'));
ALTER TABLE work_item_history DROP CONSTRAINT work_item_history_kind_check;
ALTER TABLE work_item_history ADD CONSTRAINT work_item_history_kind_check
  CHECK (kind IN ('status', 'attempt', 'operator', 'change', 'withdraw'));
