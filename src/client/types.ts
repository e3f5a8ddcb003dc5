/**
 * The SDK's wire types, derived from the server's own TypeBox schemas with `Static`, so a change
 * to a route's schema changes the SDK's types with it. Type-only imports: nothing of the server
 * reaches the SDK's JavaScript.
 */
import type { Static } from "@sinclair/typebox";
import type {
  BatchKey as BatchKeySchema,
  WorkBatchView as WorkBatchViewSchema,
  WorkItemPage as WorkItemPageSchema,
  WorkItemStatus as WorkItemStatusSchema,
  WorkItemView as WorkItemViewSchema,
} from "../domain/views.ts";
import type { AuthorityRvdmWorkItemCreate as WorkItemCreateSchema } from "../surfaces/authority-rvdm/add-work-item-create.ts";
import type { AuthorityRvdmFollowUps as FollowUpBodies } from "../surfaces/authority-rvdm/follow-ups.ts";
import type {
  AuthorityRvdmWorkItemCreateBulk as WorkItemCreateBulkSchema,
  WorkItemBulkAdded as WorkItemBulkAddedSchema,
  WorkItemBulkRefused as WorkItemBulkRefusedSchema,
  WorkItemBulkResults as WorkItemBulkResultsSchema,
} from "../surfaces/authority-rvdm/add-work-item-create-bulk.ts";
import type { WorkItemsQuery as WorkItemsQuerySchema } from "../surfaces/authority-rvdm/list-work-items.ts";
import type { EventPage as EventPageSchema, EventsQuery as EventsQuerySchema } from "../surfaces/events/list-events.ts";
import type { Credentials as CredentialsSchema, TokenResponse as TokenResponseSchema } from "../surfaces/login/authenticate.ts";
import type { HealthStatus as HealthStatusSchema, ReadyStatus as ReadyStatusSchema } from "../surfaces/ops/index.ts";
import type { WebhookDeliveriesQuery as WebhookDeliveriesQuerySchema } from "../surfaces/webhooks/list-deliveries.ts";
import type {
  WebhookDeliveryAttempt as WebhookDeliveryAttemptSchema,
  WebhookDeliveryPage as WebhookDeliveryPageSchema,
  WebhookDeliveryStatus as WebhookDeliveryStatusSchema,
  WebhookDeliveryView as WebhookDeliveryViewSchema,
} from "../webhooks/delivery-schema.ts";
import type { ProblemDetails as ProblemDetailsSchema, ValidationProblemDetails as ValidationProblemDetailsSchema } from "../http/problem-schema.ts";

/** Body of POST /api/Login/Authenticate. */
export type Credentials = Static<typeof CredentialsSchema>;
/** Answer of POST /api/Login/Authenticate. */
export type TokenResponse = Static<typeof TokenResponseSchema>;
/** Body of POST /api/AuthorityRvdm/AddWorkItemCreate. */
export type AuthorityRvdmWorkItemCreate = Static<typeof WorkItemCreateSchema>;
/** Body of POST /api/AuthorityRvdm/AddWorkItem<Kind> for each kind of follow-up (SPEC §15), by kind. */
export type AuthorityRvdmFollowUps = FollowUpBodies;
/** Body of POST /api/AuthorityRvdm/AddWorkItemChange (SPEC §15). */
export type AuthorityRvdmWorkItemChange = AuthorityRvdmFollowUps["change"];
/** Body of POST /api/AuthorityRvdm/AddWorkItemWithdraw (SPEC §15). */
export type AuthorityRvdmWorkItemWithdraw = AuthorityRvdmFollowUps["withdraw"];
/** Answer of POST /api/AuthorityRvdm/AddWorkItemCreate, …Change and …Withdraw. */
export type BatchKey = Static<typeof BatchKeySchema>;
/** Body of POST /api/AuthorityRvdm/AddWorkItemCreateBulk: 1–1,000 items, and `allOrNothing`. */
export type AuthorityRvdmWorkItemCreateBulk = Static<typeof WorkItemCreateBulkSchema>;
/** Answer of POST /api/AuthorityRvdm/AddWorkItemCreateBulk: one result per item, in request order. */
export type WorkItemBulkResults = Static<typeof WorkItemBulkResultsSchema>;
/** A stored item of a bulk add: its index in the request, and where it landed. */
export type WorkItemBulkAdded = Static<typeof WorkItemBulkAddedSchema>;
/** A refused item of a bulk add: its index in the request, and its field errors. */
export type WorkItemBulkRefused = Static<typeof WorkItemBulkRefusedSchema>;
export type WorkItemBulkResult = WorkItemBulkAdded | WorkItemBulkRefused;
export type WorkItemStatus = Static<typeof WorkItemStatusSchema>;
export type WorkItemKind = WorkItemView["kind"];
/** GET /api/AuthorityRvdm/WorkItem/{id} and DELETE of the same path. */
export type WorkItemView = Static<typeof WorkItemViewSchema>;
/** GET /api/AuthorityRvdm/WorkBatch/{id}. */
export type WorkBatchView = Static<typeof WorkBatchViewSchema>;
/** GET /api/AuthorityRvdm/WorkItems. */
export type WorkItemPage = Static<typeof WorkItemPageSchema>;
/** Filters and paging of GET /api/AuthorityRvdm/WorkItems; every one optional (limit defaults to 50). */
export type ListWorkItemsQuery = Partial<Static<typeof WorkItemsQuerySchema>>;
/** GET /api/Events: one page of the event feed, oldest first; `nextCursor` is never null. */
export type EventPage = Static<typeof EventPageSchema>;
/** One event of the feed: `eventId` is the `webhook-id` of its delivery; `data` the work item view at the event. */
export type FeedEvent = EventPage["events"][number];
export type EventType = FeedEvent["type"];
/** Cursor, filters and page size of GET /api/Events; every one optional (limit defaults to 100). */
export type ListEventsQuery = Partial<Static<typeof EventsQuerySchema>>;
/** RFC 9457 problem details, the body of every error answer; a 400 adds `errors` (ValidationProblemDetails). */
export type ProblemDetails = Static<typeof ProblemDetailsSchema> & Partial<Pick<Static<typeof ValidationProblemDetailsSchema>, "errors">>;
export type HealthStatus = Static<typeof HealthStatusSchema>;
/** A webhook delivery with every attempt (GET /api/Webhooks/Deliveries, and the 202 of Redeliver). */
export type WebhookDelivery = Static<typeof WebhookDeliveryViewSchema>;
export type WebhookDeliveryAttempt = Static<typeof WebhookDeliveryAttemptSchema>;
export type WebhookDeliveryStatus = Static<typeof WebhookDeliveryStatusSchema>;
/** GET /api/Webhooks/Deliveries. */
export type WebhookDeliveryPage = Static<typeof WebhookDeliveryPageSchema>;
/** Filters and paging of GET /api/Webhooks/Deliveries; every one optional (limit defaults to 50). */
export type ListWebhookDeliveriesQuery = Partial<Static<typeof WebhookDeliveriesQuerySchema>>;
export type ReadyStatus = Static<typeof ReadyStatusSchema>;

/** What `addWorkItemCreate`, `addWorkItemChange` and `addWorkItemWithdraw` resolve to: the batch key, and which Idempotency-Key it used. */
export type AddWorkItemResult = BatchKey & {
  idempotencyKey: string;
  /** True when the server answered with the first answer of an earlier request with this key. */
  replayed: boolean;
};

/** What `addWorkItemCreateBulk` resolves to: the results, and which Idempotency-Key it used. */
export type AddWorkItemsResult = WorkItemBulkResults & {
  idempotencyKey: string;
  /** True when the server answered with the first answer of an earlier request with this key. */
  replayed: boolean;
};

/** The body of a webhook (SPEC §6): an item reached a terminal status. The server signs exactly this type. */
export type { WebhookEvent } from "../webhooks/signing.ts";
