/**
 * Events (SPEC §10, §11.2): written in the transaction of the change that causes them, into
 * the company's feed and, for an item with a webhook_url, the webhook outbox under the same id;
 * the feed's reads; and the retention sweep's deletes.
 *
 * Commit order: `appendEvents` numbers a company's events from its event_sequences row, which
 * the writing transaction holds until it ends (PostgreSQL: a row lock; SQLite: the single
 * writer holds the whole database anyway). So a position is handed out only after every smaller
 * one is committed and visible, and a reader that has seen position p never meets a position
 * ≤ p later. Appending is the last thing a writing transaction does, so it holds that row only
 * for the inserts and the commit, and never waits for another lock while holding it.
 */
import { randomUUID } from "node:crypto";
import type { DatabasePort, Queryable, Statement } from "../port.ts";
import { iso, toWorkItemView, type WorkItemRow } from "../rows.ts";
import type { FeedEvent, ListEventsQuery, Store, WebhookEventType } from "../store.ts";
import type { WorkItemView } from "../../domain/views.ts";
import { EVENTS_SQL } from "./sql-events.ts";

type EventPart = Pick<Store, "listEvents" | "companiesWithExpiredEvents" | "deleteExpiredEvents">;

/** The id of an event (`msg_` + 32 hex), as Standard Webhooks suggests: its `webhook-id`. */
export const newEventId = () => `msg_${randomUUID().replace(/-/g, "")}`;

/**
 * Records that `type` happened to each of `items` (rows just changed in `tx`): one outbox row
 * per item with a webhook_url, then one feed event per item, all under one event id each.
 */
export async function emitEvents(tx: Queryable, companyId: number, type: WebhookEventType, items: WorkItemRow[], now: string): Promise<void> {
  if (items.length === 0) return;
  const events = items.map((row) => ({ eventId: newEventId(), data: toWorkItemView(row) }));
  for (const { eventId, data } of events) {
    if (data.webhookUrl) await tx.run(EVENTS_SQL.insertOutboxRow, [companyId, eventId, data.workItemId, type, data.webhookUrl, now]);
  }
  await appendEvents(tx, companyId, type, events, now);
}

/** Numbers the events after the company's last position (taking its row until commit) and inserts them. */
async function appendEvents(tx: Queryable, companyId: number, type: WebhookEventType, events: Array<{ eventId: string; data: WorkItemView }>, now: string): Promise<void> {
  const advanced = await tx.one<{ last_position: number | string }>(EVENTS_SQL.advanceEventSequence, [companyId, events.length]);
  let position = Number(advanced!.last_position) - events.length;
  for (const { eventId, data } of events) {
    position += 1;
    await tx.run(EVENTS_SQL.insertEvent, [companyId, position, eventId, type, data.workItemId, now, JSON.stringify(data)]);
  }
}

interface EventRow {
  position: number | string;
  event_id: string;
  event_type: WebhookEventType;
  created_at: string | Date;
  data: string;
}

const toFeedEvent = (row: EventRow): FeedEvent => ({
  position: Number(row.position),
  eventId: row.event_id,
  type: row.event_type,
  timestamp: iso(row.created_at),
  dataJson: row.data,
});

export function eventsStore(db: DatabasePort): EventPart {
  return {
    async listEvents(companyId, query) {
      const { statement, values } = listEventsStatement(companyId, query);
      return (await db.all<EventRow>(statement, values)).map(toFeedEvent);
    },

    async companiesWithExpiredEvents({ createdBefore, limit }) {
      const rows = await db.all<{ company_id: number | string }>(EVENTS_SQL.companiesWithExpiredEvents, [createdBefore, limit]);
      return rows.map((row) => Number(row.company_id));
    },

    deleteExpiredEvents({ companyId, createdBefore, limit }) {
      return db.run(EVENTS_SQL.deleteExpiredEvents, [companyId, createdBefore, limit]);
    },
  };
}

const listStatements = new Map<string, Statement>();

/**
 * One statement per combination of filters, each a plain equality after company_id, so the
 * database seeks through its index ((company_id, position), or the type's or the item's index,
 * both ending in position) straight to the first event after the cursor.
 */
function listEventsStatement(companyId: number, query: ListEventsQuery): { statement: Statement; values: unknown[] } {
  const values: unknown[] = [companyId, query.afterPosition, query.limit];
  const conditions: string[] = [];
  if (query.type !== undefined) {
    values.push(query.type);
    conditions.push(` AND event_type = $${values.length}`);
  }
  if (query.workItemId !== undefined) {
    values.push(query.workItemId);
    conditions.push(` AND work_item_id = $${values.length}`);
  }
  const key = `${query.type === undefined ? "" : "_type"}${query.workItemId === undefined ? "" : "_item"}`;
  let statement = listStatements.get(key);
  if (!statement) {
    statement = {
      name: `list_events${key}`,
      // As text on both stores (PostgreSQL's driver would parse a json column).
      text: `SELECT position, event_id, event_type, created_at, CAST(data AS text) AS data FROM events
              WHERE company_id = $1${conditions.join("")} AND position > $2 ORDER BY position LIMIT $3`,
    };
    listStatements.set(key, statement);
  }
  return { statement, values };
}
