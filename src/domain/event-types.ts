/**
 * What can happen to a work item that integrators are told of: the type of every event, in the
 * feed (SPEC §11.2) and on the webhook (SPEC §6, §10). The store keeps it, the webhook schema
 * documents it.
 */
export const WEBHOOK_EVENT_TYPES = ["workitem.submitted", "workitem.succeeded", "workitem.failed", "workitem.deadline_at_risk", "workitem.retried", "workitem.changed", "workitem.withdrawn"] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
