/**
 * The Work-Item API client SDK: `import { WorkItemClient } from "@work-item-api/client"`
 * (packages/client/, built by scripts/build-client.ts).
 * Node 20, ESM (and CommonJS in the package), no dependency beyond Node itself.
 */
export { WorkItemClient, type AddWorkItemOptions, type CallOptions, type WorkItemClientOptions } from "./client.ts";
export { WorkItemApiError, WorkItemNetworkError } from "./errors.ts";
export { EventStream, type EventStreamOptions } from "./event-stream.ts";
export { backoffDelay, parseRetryAfter } from "./retry.ts";
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_SECONDS, type VerifyWebhookOptions, type WebhookHeaders } from "./webhooks.ts";
export type * from "./types.ts";
