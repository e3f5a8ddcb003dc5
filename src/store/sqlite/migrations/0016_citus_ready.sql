-- No triggers on tenant tables: see postgres/migrations/0016_citus_ready.sql. The store
-- writes every item as New, which is not counted; seeds that write other statuses keep
-- company_item_counts themselves.
DROP TRIGGER work_items_counted_on_insert;
