-- No triggers on tenant tables (docs/scaling.md §3): Citus refuses to distribute a table that has
-- one. The last was 0009's insert trigger on work_items, which counted items written with another
-- status than New. The store writes every item as New, which is not counted (0009), and moves the
-- counts with each state change (src/store/core/transition.ts, 0012); seeds that write other
-- statuses keep company_item_counts themselves. The twin of sqlite/migrations/0016_no_tenant_triggers.sql.
DROP TRIGGER work_items_counted_on_insert ON work_items;
DROP FUNCTION wia_count_inserted_item();
