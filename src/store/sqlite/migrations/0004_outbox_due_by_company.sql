-- The dispatcher claims due deliveries company by company (docs/scaling.md): each claim walks
-- this index for one company. webhook_outbox_due stays for finding the companies.
CREATE INDEX webhook_outbox_due_by_company ON webhook_outbox (company_id, next_attempt_at) WHERE status = 'Pending';
