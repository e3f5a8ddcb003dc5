-- The per-company item counts are kept by the store's own statements when an item changes state
-- (src/store/core/transition.ts); see postgres/migrations/0012_counts_in_transitions.sql.
DROP TRIGGER work_items_counted_on_update;
-- InProgress is no longer counted either: a claim that takes over a dead worker's item finds it
-- InProgress already. The overview counts InProgress items (as many as calls in flight) directly.
DELETE FROM company_item_counts WHERE status = 'InProgress';
