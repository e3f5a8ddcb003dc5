-- One trace per item (SPEC §17): each item keeps the W3C trace context of its intake, so the
-- bot's authority calls and the webhook deliveries about it are spans of the same trace. NULL when
-- tracing is off, and for the items of a release before this one.
ALTER TABLE work_items ADD COLUMN trace_parent TEXT;
