-- The operators' overview of the queue by deadline (SPEC §14; docs/performance.md, Operations).

-- The New items by deadline: the overdue ones and those of the next five deadlines, with their
-- companies, are counted from this index alone, stopping after the fifth deadline (8-14 ms with
-- 100,000 items waiting at 1M items, where finding them through their batches took 65-110 ms).
-- Every item enters as New, so intake pays an entry per item. The item id comes before the
-- company so that new entries go to the end of their deadline's range, a handful of pages per
-- group commit; (deadline_at, company_id) scattered them over a page per deadline and company,
-- and cost SQLite's intake 41% more store CPU per item instead of 10%.
CREATE INDEX work_items_new_by_deadline ON work_items (deadline_at, work_item_id, company_id) WHERE status = 'New';

-- The items filed in the last hour (submittedLastHour), from this index alone. submitted_at is
-- set when the bot files an item, so intake's New items, which have none, are never in it.
CREATE INDEX work_items_submitted ON work_items (submitted_at, company_id) WHERE submitted_at IS NOT NULL;
