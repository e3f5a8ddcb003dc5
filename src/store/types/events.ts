/** The store's event feed: every event of a company, kept in the order it was committed. */
import type { WebhookEventType } from "../../domain/event-types.ts";

/**
 * One event of a company's feed (SPEC §11.2), as stored in the transaction of the change that
 * caused it, whether or not the item has a webhook_url.
 */
export interface FeedEvent {
  /** The company's events are numbered 1, 2, 3… in the order they were committed. */
  position: number;
  /** The `webhook-id` of the event's delivery, when it has one. */
  eventId: string;
  type: WebhookEventType;
  /** When it happened (ISO 8601 UTC). */
  timestamp: string;
  /**
   * The work item view at the event, as the JSON text stored with it: the feed passes it on
   * without parsing and serialising it again (docs/performance.md, "Event feed").
   */
  dataJson: string;
}

export interface ListEventsQuery {
  /** Only events after this position (0: from the oldest kept). */
  afterPosition: number;
  type?: WebhookEventType;
  workItemId?: number;
  limit: number;
}

/** The event feed (SPEC §11.2). */
export interface EventsStore {
  /**
   * The company's events after `afterPosition` that match the filters, oldest first (position
   * order, which is commit order), at most `limit`. A reader that passes the last position it
   * got never misses an event committed later, on any store and with any number of processes.
   */
  listEvents(companyId: number, query: ListEventsQuery): Promise<FeedEvent[]>;
  /** Up to `limit` companies holding events created at or before `createdBefore` (sweep step 1). */
  companiesWithExpiredEvents(input: { createdBefore: string; limit: number }): Promise<number[]>;
  /** Deletes up to `limit` of the company's oldest events created at or before `createdBefore`; resolves to how many. */
  deleteExpiredEvents(input: { companyId: number; createdBefore: string; limit: number }): Promise<number>;
}
