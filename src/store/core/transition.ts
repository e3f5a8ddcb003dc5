/**
 * An item's state change, in one place: the row, its timeline entries, its place in the filing
 * queue, its batch's completion, and the event it emits (feed and webhook outbox), all in the
 * transaction of the change. The bot's claims and outcomes, the integrator's and the operators'
 * cancel, and the operators' retry all go through here.
 *
 * What follows from the row after the change:
 * - New and due at some time (next_attempt_at set: a retry, a call not made) → in its filing
 *   lane, which is ready no later than that.
 * - Submitted and not held by a worker → in its company's status lane, ready by its next poll.
 * - Left InProgress for anything but New → its filing lane goes when it has no item left.
 * - Successful, Failed or Cancelled in a batch the bot took up → one item fewer to finish; the
 *   last one completes the batch.
 * - Another state than before → the company's counts of items per state (company_item_counts,
 *   read by the operators' overview; New and InProgress are counted where they are read) move,
 *   once per state and change.
 * - A create filed (Submitted or Successful) → the first of its changes and withdrawals waiting
 *   joins the filing queue; closed (Failed, Cancelled, Withdrawn) → those waiting fail with
 *   ORIGINAL_CLOSED. A change or withdrawal finished → the next of its original's, likewise
 *   (SPEC §15: one at a time, in intake order).
 * Events are written last, all of them after every row of the change: appending to the feed
 * holds the company's sequence row until commit (events.ts).
 */
import type { Queryable, Statement } from "../port.ts";
import { iso, type WorkItemRow } from "../rows.ts";
import type { OperatorAction, WebhookEventType } from "../store.ts";
import { originalClosed } from "../../domain/item-errors.ts";
import type { WorkItemStatus } from "../../domain/views.ts";
import { FOLLOW_UP_KINDS } from "../../domain/work-item-kinds.ts";
import { NO_DEADLINE } from "../../scheduler/order.ts";
import { emitEvents } from "./events.ts";
import { BATCHES_SQL } from "./sql-batches.ts";
import { FILING_QUEUE_SQL } from "./sql-filing-queue.ts";
import { TRANSITION_SQL } from "./sql-transition.ts";

/**
 * The kinds of history entry, which work_item_history's `kind` takes (store/kinds.ts): a
 * follow-up's kind on its original, about one of its changes or its withdrawal.
 */
export const HISTORY_KINDS = ["status", "attempt", "operator", ...FOLLOW_UP_KINDS] as const;

/** One entry of an item's history (work_item_history), written in the transaction of what it records. */
export interface HistoryEntry {
  /** change, withdraw: on an original, about one of its changes or its withdrawal (the item's id in `detail`). */
  kind: (typeof HISTORY_KINDS)[number];
  status?: WorkItemStatus | null;
  detail?: string | null;
  action?: OperatorAction;
}

/** A row as the statements of a change return it: the item's columns, and the queue's where known. */
export type MovedRow = WorkItemRow & { next_attempt_at?: string | Date | null; claimed_by?: string | null; polls?: number | string };

export interface ItemChange {
  companyId: number;
  now: string;
  /** The state the item left (it may be told by the row, e.g. by its application number). */
  from: WorkItemStatus | ((row: MovedRow) => WorkItemStatus);
  /** Its timeline entries. */
  history: HistoryEntry[];
  /** The event the change emits, if any (it may depend on the row, e.g. on its polls). */
  event?: WebhookEventType | ((row: MovedRow) => WebhookEventType | undefined);
}

/**
 * Runs `update` (which names the company and the state the item must be in, and RETURNs the
 * item's columns) and everything that follows from it. Undefined, with nothing written, when
 * no row moved.
 */
export async function transition(tx: Queryable, update: Statement, values: unknown[], change: ItemChange, events?: PendingEvents): Promise<MovedRow | undefined> {
  const row = await tx.one<MovedRow>(update, values);
  if (!row) return undefined;
  await moved(tx, [row], change, events);
  return row;
}

/**
 * Events of a transaction's changes not written yet: a transaction of several changes passes one
 * to each and writes them at its end (`emitPending`), so no row is locked after the feed's.
 */
export type PendingEvents = Array<{ companyId: number; type: WebhookEventType; rows: MovedRow[]; now: string }>;

export async function emitPending(tx: Queryable, events: PendingEvents): Promise<void> {
  for (const { companyId, type, rows, now } of events.splice(0)) await emitEvents(tx, companyId, type, rows, now);
}

/**
 * What follows from rows that one statement moved (`transition` for one; a claim for many).
 * With `events`, the events are added there for the caller to write; otherwise written at the end.
 */
export async function moved(tx: Queryable, rows: MovedRow[], change: ItemChange, events?: PendingEvents): Promise<void> {
  const pending = events ?? [];
  await settle(tx, rows, change, pending);
  if (!events) await emitPending(tx, pending);
}

async function settle(tx: Queryable, rows: MovedRow[], change: ItemChange, pending: PendingEvents): Promise<void> {
  const { companyId, now } = change;
  const emitting = new Map<WebhookEventType, MovedRow[]>();
  const counts = new Map<string, number>();
  // New and InProgress are not counted (the overview counts them where it reads them).
  const count = (status: string, by: number) => status !== "New" && status !== "InProgress" && counts.set(status, (counts.get(status) ?? 0) + by);
  for (const row of rows) {
    const workItemId = Number(row.work_item_id);
    const from = typeof change.from === "function" ? change.from(row) : change.from;
    for (const entry of change.history) await recordHistory(tx, companyId, workItemId, now, entry);
    await requeue(tx, row, from, now);
    if (row.status !== undefined && row.status !== from) {
      count(from, -1);
      count(row.status, 1);
    }
    const type = typeof change.event === "function" ? change.event(row) : change.event;
    if (type) emitting.set(type, [...(emitting.get(type) ?? []), row]);
  }
  for (const [status, by] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (by !== 0) await tx.run(TRANSITION_SQL.countItems, [companyId, status, by]);
  }
  for (const [type, items] of emitting) pending.push({ companyId, type, rows: items, now });
  for (const row of rows) {
    const from = typeof change.from === "function" ? change.from(row) : change.from;
    if (row.status !== from) await advanceFollowUps(tx, row, from, now, pending);
  }
}

const TERMINAL = new Set<string>(["Successful", "Failed", "Cancelled", "Withdrawn"]);
/** An original's states in which its changes and withdrawal are filed, and those that end them. */
const FILED = new Set<string>(["Submitted", "Successful"]);
const CLOSED = new Set<string>(["Failed", "Cancelled", "Withdrawn"]);

/** The changes and withdrawal of an original move on when it, or one of them, changed state (SPEC §15). */
async function advanceFollowUps(tx: Queryable, row: MovedRow, from: WorkItemStatus, now: string, pending: PendingEvents): Promise<void> {
  const companyId = Number(row.company_id);
  let originalId: number;
  let originalStatus: string;
  if (row.kind === "create") {
    if (!(FILED.has(row.status) && !FILED.has(from)) && !CLOSED.has(row.status)) return;
    originalId = Number(row.work_item_id);
    originalStatus = row.status;
  } else {
    if (!TERMINAL.has(row.status) || TERMINAL.has(from) || row.original_work_item_id === null) return;
    originalId = Number(row.original_work_item_id);
    const original = await tx.one<{ status: string }>(FILING_QUEUE_SQL.originalStatus, [companyId, originalId]);
    if (!original) return;
    originalStatus = original.status;
  }
  if (FILED.has(originalStatus)) {
    const next = await tx.all<MovedRow>(FILING_QUEUE_SQL.releaseNextFollowUp, [companyId, originalId]);
    await settle(tx, next, { companyId, now, from: "New", history: [] }, pending);
  } else if (CLOSED.has(originalStatus)) {
    const error = originalClosed(originalId, originalStatus);
    const failed = await tx.all<MovedRow>(FILING_QUEUE_SQL.failWaitingFollowUps, [companyId, originalId, JSON.stringify(error), now]);
    failed.sort((a, b) => Number(a.work_item_id) - Number(b.work_item_id));
    await settle(tx, failed, { companyId, now, from: "New", history: [{ kind: "status", status: "Failed", detail: error.message }], event: "workitem.failed" }, pending);
  }
}

/** The queue's and the batch's part of a change. */
async function requeue(tx: Queryable, row: MovedRow, from: WorkItemStatus, now: string): Promise<void> {
  const companyId = Number(row.company_id);
  const lane = [companyId, row.work_type, laneDeadline(row.deadline_at)] as const;
  const nextAttemptAt = row.next_attempt_at == null ? null : iso(row.next_attempt_at);
  if (row.status === "New" && nextAttemptAt !== null) {
    await tx.run(FILING_QUEUE_SQL.enterFilingLane, [...lane, nextAttemptAt]);
  } else if (from === "InProgress" && row.status !== "InProgress") {
    await dropFilingLaneIfEmpty(tx, companyId, row.work_type, row.deadline_at === null ? null : iso(row.deadline_at));
  }
  if (row.status === "Submitted" && !row.claimed_by && nextAttemptAt !== null) {
    await tx.run(FILING_QUEUE_SQL.enterStatusLane, [companyId, row.work_type, nextAttemptAt]);
  }
  if (TERMINAL.has(row.status) && !TERMINAL.has(from)) await tx.run(BATCHES_SQL.countFinishedItem, [companyId, row.work_batch_id, now]);
}

/** A lane's deadline as its key holds it. */
export const laneDeadline = (deadlineAt: string | Date | null) => (deadlineAt === null ? NO_DEADLINE : iso(deadlineAt));

/**
 * Sets the lane's ready_at to its earliest due item, or deletes it when it has none. The lane
 * is locked first and its items looked at after, in a statement of their own: a writer that
 * puts an item back in the lane either committed before that look (and is seen), or upserts the
 * lane after the delete (and creates it again). Never the other way round.
 *
 * `skipLocked` (a claim): a lane another transaction holds is left as it is, its ready_at early
 * rather than late, which is safe; the claim does not wait for it.
 */
export async function dropFilingLaneIfEmpty(tx: Queryable, companyId: number, workType: string, deadlineAt: string | null, options: { skipLocked?: boolean } = {}): Promise<string | null> {
  const key = [companyId, workType, laneDeadline(deadlineAt)];
  if (!(await tx.one(options.skipLocked ? FILING_QUEUE_SQL.tryHoldFilingLane : FILING_QUEUE_SQL.holdFilingLane, key))) return null;
  const next = deadlineAt === null
    ? await tx.one<{ ready_at: string | Date | null }>(FILING_QUEUE_SQL.laneWithoutDeadlineReadyAt, [companyId, workType])
    : await tx.one<{ ready_at: string | Date | null }>(FILING_QUEUE_SQL.laneReadyAt, key);
  const readyAt = next?.ready_at == null ? null : iso(next.ready_at);
  if (readyAt === null) await tx.run(FILING_QUEUE_SQL.deleteFilingLane, key);
  else await tx.run(FILING_QUEUE_SQL.setLaneReadyAt, [...key, readyAt]);
  return readyAt;
}

export async function recordHistory(tx: Queryable, companyId: number, workItemId: number, at: string, entry: HistoryEntry): Promise<void> {
  await tx.run(TRANSITION_SQL.insertHistory, [
    companyId,
    workItemId,
    at,
    entry.kind,
    entry.status ?? null,
    entry.detail ?? null,
    entry.action?.operator.operatorId ?? null,
    entry.action?.operator.email ?? null,
    entry.action?.reason ?? null,
  ]);
}
