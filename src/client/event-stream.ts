/**
 * The event feed as an async iterator (SPEC §11.2): page after page from a cursor, oldest
 * first, until it has caught up, or, with `follow`, polling for newer events until its signal
 * aborts. `cursor` says where to resume (e.g. after a restart): it never skips an event, and at
 * worst repeats some of the page being read, so handle events idempotently (by `eventId`).
 */
import { sleep } from "./retry.ts";
import type { EventPage, FeedEvent, ListEventsQuery } from "./types.ts";

export interface EventStreamOptions {
  /** Keep polling once caught up instead of ending; stop with `signal` (or `break`). */
  follow?: boolean;
  /** Wait between polls once caught up, with `follow`; default 1,000 ms. */
  pollIntervalMs?: number;
  /** Aborting ends the iteration quietly (a follow stream otherwise never ends). */
  signal?: AbortSignal;
}

/** The server's page size when the query names none. */
const DEFAULT_LIMIT = 100;

export class EventStream implements AsyncIterable<FeedEvent> {
  /**
   * Resume here with `{ after: stream.cursor }`: the `nextCursor` of the last page whose last
   * event was handed out (the query's `after` before that).
   */
  cursor: string | undefined;

  constructor(
    private readonly fetchPage: (query: ListEventsQuery, signal: AbortSignal | undefined) => Promise<EventPage>,
    private readonly query: ListEventsQuery,
    private readonly options: EventStreamOptions,
  ) {
    this.cursor = query.after;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<FeedEvent, void, undefined> {
    const { follow = false, pollIntervalMs = 1000, signal } = this.options;
    const limit = this.query.limit ?? DEFAULT_LIMIT;
    for (;;) {
      let page: EventPage;
      try {
        page = await this.fetchPage({ ...this.query, after: this.cursor }, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      const last = page.events.length - 1;
      if (last < 0) this.cursor = page.nextCursor;
      for (const [index, event] of page.events.entries()) {
        if (index === last) this.cursor = page.nextCursor;
        yield event;
      }
      if (page.events.length < limit) {
        if (!follow) return;
        try {
          await sleep(pollIntervalMs, signal);
        } catch {
          return;
        }
      }
    }
  }
}
