-- Every add writes a new item with status New, and each index on work_items costs every group
-- commit one more page per company (SQLite writes whole pages to the WAL). The status index now
-- leaves New items out: the WorkItems status filter finds New items through their batches
-- instead, since a New item is only ever in a batch that is not Completed (a batch completes
-- only once none of its items is New or InProgress, in the same transaction).
DROP INDEX work_items_by_status;
CREATE INDEX work_items_by_status_not_new ON work_items (company_id, status, work_item_id) WHERE status <> 'New';
