-- The per-company item counts (0009) are kept by the store's own statements when an item changes
-- state (src/store/core/transition.ts), in the transaction of the change, instead of by a
-- statement-level trigger with transition tables: Citus cannot run that trigger on a distributed
-- table (every UPDATE of work_items failed there), and its counter upserts took the counter rows
-- in the middle of a claim. The twin of sqlite/migrations/0012_counts_in_transitions.sql.
-- Items enter as New, which is not counted; the insert trigger stays for rows written with
-- another status (only seeds and benches do that).
DROP TRIGGER work_items_counted_on_update ON work_items;
DROP FUNCTION wia_count_updated_items();
-- InProgress is no longer counted either: a claim that takes over a dead worker's item finds it
-- InProgress already. The overview counts InProgress items (as many as calls in flight) directly.
DELETE FROM company_item_counts WHERE status = 'InProgress';
