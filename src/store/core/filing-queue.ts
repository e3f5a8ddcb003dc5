/**
 * The filing queue (SPEC §14): batches taken up into it, items claimed from it in one order over
 * every company, Submitted items claimed for their status requests, claims given back, and the
 * deadlines of items still waiting flagged when at risk. What a call made of a claimed item is
 * recorded by outcomes.ts.
 *
 * A claim reads the first lanes (a few rows of filing_lanes, whatever the number of items
 * waiting), plans which lane gives each next item (src/scheduler/order.ts), and takes the items
 * lane by lane, each statement naming its company. A lane that gave fewer than planned is looked
 * at again (its ready_at moved on, or it is gone) and the claim goes on with lanes read anew.
 *
 * Locks are taken in one order everywhere: items, then lanes, then batches and companies, then
 * the event sequence (transition.ts). A claim never waits for a lane: it skips a lane another
 * transaction holds instead (that lane's ready_at stays early, or its turn stays as it was, until
 * the next claim). Each round of a claim is a transaction of its own that waits, in company
 * order, only for the company's item counters (moving items to InProgress updates them,
 * migrations/0009) and then for the companies it serves; it takes lanes only after its items.
 * Otherwise an outcome (which holds its company's counters and then waits for its lane) and a
 * claim holding that lane from an earlier round, or two claims taking companies in different
 * orders, would deadlock. A round that fails leaves the items of the rounds before it held until
 * their lease runs out, as a worker that died would.
 */
import type { DatabasePort, Queryable } from "../port.ts";
import { iso, toDueItem, toItemToPoll, type DueItemRow, type ItemToPollRow, type WorkItemRow } from "../rows.ts";
import type { CompanyTurn, DueItem, ItemToPoll, Store } from "../store.ts";
import { itemError } from "../../domain/item-errors.ts";
import { fileOrder, NO_DEADLINE, servedSeqAt, tierOf, type Lane, type QueuedItem } from "../../scheduler/order.ts";
import { emitEvents } from "./events.ts";
import { BATCHES_SQL } from "./sql-batches.ts";
import { FILING_QUEUE_SQL } from "./sql-filing-queue.ts";
import { dropFilingLaneIfEmpty, moved, transition, type MovedRow } from "./transition.ts";

type FilingQueuePart = Pick<Store, "companiesWithBotWork" | "queueBatches" | "claimFilingWork" | "claimStatusRequests" | "releaseItems" | "flagDeadlinesAtRisk">;

type Id = number | string;
interface LaneRow {
  company_id: Id;
  work_type: string;
  deadline_at: string | Date;
  served_seq: Id;
}

/** An item a claim may take: a due item of a lane read, or a lane's next one, not read. */
type Candidate = QueuedItem & { lane: Lane; unknown: boolean };

/** Rounds of reading lanes in one claim: each round either fills the claim or finds a lane that ran dry. */
const MAX_CLAIM_ROUNDS = 8;

export function filingQueueStore(db: DatabasePort): FilingQueuePart {
  return {
    async companiesWithBotWork() {
      const rows = await db.all<{ company_id: Id; to_queue: Id }>(FILING_QUEUE_SQL.companiesWithBotWork);
      return rows.map((row) => ({ companyId: Number(row.company_id), toQueue: Number(row.to_queue) === 1 }));
    },

    queueBatches(companyId, now) {
      return db.transaction(async (tx) => {
        await tx.run(BATCHES_SQL.closeOpenBatches, [companyId, now]);
        const held = await tx.all<{ work_batch_id: Id }>(FILING_QUEUE_SQL.holdClosedBatches, [companyId]);
        const batches = held.sort((a, b) => Number(a.work_batch_id) - Number(b.work_batch_id));
        for (const { work_batch_id: batchId } of batches) {
          const queued = await tx.run(FILING_QUEUE_SQL.queueBatchItems, [companyId, batchId, now]);
          await failOrphanedFollowUps(tx, companyId, batchId, now);
          // Changes and withdrawals waiting for their original are the batch's to finish too.
          const waiting = await tx.one<{ new_items: number | string }>(FILING_QUEUE_SQL.batchNewItems, [companyId, batchId]);
          await tx.run(BATCHES_SQL.takeUpBatch, [companyId, batchId, Math.max(queued, Number(waiting?.new_items ?? 0)), now]);
          if (queued > 0) await tx.run(FILING_QUEUE_SQL.addBatchLanes, [companyId, batchId, NO_DEADLINE]);
        }
        return batches.length;
      });
    },

    async claimFilingWork(input) {
      const claimed: Array<Omit<DueItem, "turn">> = [];
      // Each company's turn before this claim first served it, and the last one the claim gave it.
      const companyTurns = new Map<number, CompanyTurn>();
      // Lanes found without a due item: dropped (or left early) after their round, not read again.
      const empty = new Set<string>();
      for (let round = 0; round < MAX_CLAIM_ROUNDS && claimed.length < input.limit; round += 1) {
        const more = await db.transaction(async (tx) => {
          const wanted = input.limit - claimed.length;
          const read = await firstLanes(tx, input.now, input.dueBefore, wanted + empty.size);
          const lanes = read.filter((lane) => !empty.has(laneKey(lane)));
          if (lanes.length === 0) return false;
          // The candidates: the first due items of each lane read, its share of the claim and one
          // more (so a lane that has no more is known to). A lane that gave all it was asked may
          // have more: its next item is unknown, and stands where the order would take it (a lane
          // gives its items in intake order).
          const share = Math.ceil(wanted / lanes.length) + 1;
          const candidates: Candidate[] = [];
          const found: Lane[] = [];
          for (const lane of lanes) {
            const ids = await dueItemIds(tx, lane, input.dueBefore, share);
            if (ids.length === 0) found.push(lane);
            const item = { companyId: lane.companyId, workType: lane.workType, deadlineAt: lane.deadlineAt, lane };
            for (const workItemId of ids) candidates.push({ ...item, workItemId, unknown: false });
            if (ids.length === share) candidates.push({ ...item, workItemId: Number.MAX_SAFE_INTEGER, unknown: true });
          }
          const turns = new Map(lanes.map((lane) => [lane.companyId, lane.servedSeq]));
          const order = fileOrder(candidates, input.now, turns) as Candidate[];
          // Sure up to the first unknown item, and as far as lanes not read cannot come first.
          const known = order.findIndex((candidate) => candidate.unknown);
          const plan = surePrefix(known < 0 ? order : order.slice(0, known), read.length < wanted + empty.size ? undefined : read[read.length - 1]!, input.now).slice(0, wanted);
          const perLane = new Map<string, { lane: Lane; count: number }>();
          for (const item of plan) {
            const key = laneKey(item.lane);
            perLane.set(key, { lane: item.lane, count: (perLane.get(key)?.count ?? 0) + 1 });
          }
          // Items lane by lane in company order (the order writes lock in); empty lanes after them.
          const taken = new Map<string, Array<Omit<DueItem, "turn">>>();
          for (const { lane, count } of [...perLane.values()].sort((x, y) => compareLaneKeys(x.lane, y.lane))) {
            taken.set(laneKey(lane), await claimFromLane(tx, lane, count, input));
          }
          for (const lane of found) {
            empty.add(laneKey(lane));
            await dropFilingLaneIfEmpty(tx, lane.companyId, lane.workType, lane.deadlineAt, { skipLocked: true });
          }
          // The plan's order (an item another claimer took meanwhile is replaced by the lane's
          // next one); the companies served move to the back before the next round reads lanes.
          const served = new Map<number, number>();
          for (const item of plan) {
            const next = taken.get(laneKey(item.lane))!.shift();
            if (!next) continue;
            claimed.push(next);
            served.set(next.companyId, claimed.length - 1);
            if (!companyTurns.has(next.companyId)) companyTurns.set(next.companyId, { before: item.lane.servedSeq, after: item.lane.servedSeq });
          }
          for (const [companyId, after] of await serve(tx, served, Date.parse(input.now))) companyTurns.get(companyId)!.after = after;
          return plan.length > 0 || found.length > 0;
        });
        if (!more) break;
      }
      return claimed.map((item) => ({ ...item, turn: { ...companyTurns.get(item.companyId)! } }));
    },

    claimStatusRequests({ owner, dueBefore, leaseExpiresAt, limit }) {
      return db.transaction(async (tx) => {
        const lanes = await tx.all<{ company_id: Id; work_type: string }>(FILING_QUEUE_SQL.dueStatusLanes, [dueBefore, limit]);
        const claimed: ItemToPoll[] = [];
        for (const lane of lanes) {
          if (claimed.length >= limit) break;
          const companyId = Number(lane.company_id);
          const rows = await tx.all<ItemToPollRow>(FILING_QUEUE_SQL.claimStatusRequests, [companyId, lane.work_type, dueBefore, owner, leaseExpiresAt, limit - claimed.length]);
          claimed.push(...rows.map(toItemToPoll).sort((a, b) => a.workItemId - b.workItemId));
          await settleStatusLane(tx, companyId, lane.work_type);
        }
        return claimed;
      });
    },

    releaseItems(claims, { now, dueAt, reason }) {
      if (claims.length === 0) return Promise.resolve(0);
      return db.transaction(async (tx) => {
        let released = 0;
        // In company order, the order a claim's writes lock in.
        for (const claim of [...claims].sort((a, b) => a.companyId - b.companyId || a.workItemId - b.workItemId)) {
          const filing = await transition(tx, FILING_QUEUE_SQL.releaseFilingItem, [claim.companyId, claim.workItemId, claim.owner, now, dueAt], {
            companyId: claim.companyId,
            now,
            from: "InProgress",
            history: [{ kind: "status", status: "New", detail: `Not filed: ${reason}` }],
          });
          if (filing && claim.turn) {
            const turn = [claim.companyId, claim.turn.before, claim.turn.after];
            await tx.run(FILING_QUEUE_SQL.restoreCompanyLanesTurn, turn);
            await tx.run(FILING_QUEUE_SQL.restoreCompanyTurn, turn);
          }
          const polling = filing
            ? undefined
            : await transition(tx, FILING_QUEUE_SQL.releaseStatusItem, [claim.companyId, claim.workItemId, claim.owner, dueAt], { companyId: claim.companyId, now, from: "Submitted", history: [] });
          if (filing || polling) released += 1;
        }
        return released;
      });
    },

    flagDeadlinesAtRisk(companyId, { riskBefore, now }) {
      return db.transaction(async (tx) => {
        const flagged = await tx.all<WorkItemRow>(FILING_QUEUE_SQL.flagDeadlinesAtRisk, [companyId, riskBefore, now]);
        flagged.sort((a, b) => Number(a.work_item_id) - Number(b.work_item_id));
        await emitEvents(tx, companyId, "workitem.deadline_at_risk", flagged, now);
        return flagged.length;
      });
    },
  };
}

const laneKey = (lane: Lane) => `${lane.companyId}\u0000${lane.workType}\u0000${lane.deadlineAt}`;
/** Company order (the order a claim's writes lock in), then work type and deadline. */
const compareLaneKeys = (a: Lane, b: Lane) =>
  a.companyId - b.companyId || (a.workType < b.workType ? -1 : a.workType > b.workType ? 1 : 0) || (a.deadlineAt ?? NO_DEADLINE).localeCompare(b.deadlineAt ?? NO_DEADLINE);

/** Up to `limit` lanes ready by `dueBefore`, in lane order: on time, then late, then without a deadline. */
async function firstLanes(tx: Queryable, now: string, dueBefore: string, limit: number): Promise<Lane[]> {
  const rows = await tx.all<LaneRow>(FILING_QUEUE_SQL.onTimeLanes, [now, dueBefore, NO_DEADLINE, limit]);
  if (rows.length < limit) rows.push(...(await tx.all<LaneRow>(FILING_QUEUE_SQL.lateLanes, [now, dueBefore, limit - rows.length])));
  if (rows.length < limit) rows.push(...(await tx.all<LaneRow>(FILING_QUEUE_SQL.lanesWithoutDeadline, [NO_DEADLINE, dueBefore, limit - rows.length])));
  return rows.map((row) => {
    const deadline = iso(row.deadline_at);
    return { companyId: Number(row.company_id), workType: row.work_type, deadlineAt: deadline === NO_DEADLINE ? null : deadline, servedSeq: Number(row.served_seq) };
  });
}

/**
 * The part of `order` (over the lanes read) that is the queue's order too. When every ready lane
 * was read (`lastRead` undefined), all of it. Otherwise lanes not read may share the deadline of
 * the last one read: their turns are no earlier than any lane read there, so in that deadline
 * only a lane's first item is sure, and only while its company was not served before it in this
 * claim (a served company goes to the back, behind lanes not read).
 */
function surePrefix<I extends QueuedItem & { lane: Lane }>(order: I[], lastRead: Lane | undefined, now: string): I[] {
  if (!lastRead) return order;
  const served = new Set<number>();
  const fromLane = new Set<string>();
  let sure = 0;
  for (const item of order) {
    const partial = item.deadlineAt === lastRead.deadlineAt && tierOf(item.deadlineAt, now) === tierOf(lastRead.deadlineAt, now);
    if (partial && (served.has(item.companyId) || fromLane.has(laneKey(item.lane)))) break;
    served.add(item.companyId);
    fromLane.add(laneKey(item.lane));
    sure += 1;
  }
  return order.slice(0, sure);
}

/** The ids of the lane's first `limit` due items, in intake order (a read: the claim takes them after). */
async function dueItemIds(tx: Queryable, lane: Lane, dueBefore: string, limit: number): Promise<number[]> {
  const rows =
    lane.deadlineAt === null
      ? await tx.all<{ work_item_id: Id }>(FILING_QUEUE_SQL.dueLaneItemsWithoutDeadline, [lane.companyId, lane.workType, dueBefore, limit])
      : await tx.all<{ work_item_id: Id }>(FILING_QUEUE_SQL.dueLaneItems, [lane.companyId, lane.workType, lane.deadlineAt, dueBefore, limit]);
  return rows.map((row) => Number(row.work_item_id));
}

async function claimFromLane(tx: Queryable, lane: Lane, count: number, input: { owner: string; now: string; dueBefore: string; leaseExpiresAt: string }): Promise<Array<Omit<DueItem, "turn">>> {
  const claim = [input.dueBefore, input.owner, input.leaseExpiresAt, count, input.now];
  const rows =
    lane.deadlineAt === null
      ? await tx.all<DueItemRow & MovedRow>(FILING_QUEUE_SQL.claimLaneWithoutDeadline, [lane.companyId, lane.workType, ...claim])
      : await tx.all<DueItemRow & MovedRow>(FILING_QUEUE_SQL.claimLane, [lane.companyId, lane.workType, lane.deadlineAt, ...claim]);
  rows.sort((a, b) => Number(a.work_item_id) - Number(b.work_item_id));
  await moved(tx, rows, { companyId: lane.companyId, now: input.now, from: "New", history: [{ kind: "status", status: "InProgress" }] });
  return rows.map(toDueItem);
}

/** Each company served moves to the back of its turn, in company order (the lock order). Returns each one's new turn. */
async function serve(tx: Queryable, served: Map<number, number>, nowMs: number): Promise<Map<number, number>> {
  const turns = new Map<number, number>();
  for (const [companyId, position] of [...served].sort(([a], [b]) => a - b)) {
    const seq = servedSeqAt(nowMs, position);
    await tx.run(FILING_QUEUE_SQL.serveCompanyLanes, [companyId, seq]);
    await tx.run(FILING_QUEUE_SQL.serveCompany, [companyId, seq]);
    turns.set(companyId, seq);
  }
  return turns;
}

/** A change or withdrawal of a closed original, taken up (after an operator's retry): it fails, as one waiting would have. */
async function failOrphanedFollowUps(tx: Queryable, companyId: number, batchId: Id, now: string): Promise<void> {
  const error = itemError("ORIGINAL_CLOSED", "The original work item is Failed, Cancelled or Withdrawn; this was not filed.");
  const rows = await tx.all<MovedRow>(FILING_QUEUE_SQL.failOrphanedFollowUps, [companyId, batchId, JSON.stringify(error), now]);
  rows.sort((a, b) => Number(a.work_item_id) - Number(b.work_item_id));
  await moved(tx, rows, { companyId, now, from: "New", history: [{ kind: "status", status: "Failed", detail: error.message }], event: "workitem.failed" });
}

/** The status lane's ready_at becomes its earliest Submitted item's next poll; it goes when it has none. */
async function settleStatusLane(tx: Queryable, companyId: number, workType: string): Promise<void> {
  if (!(await tx.one(FILING_QUEUE_SQL.tryHoldStatusLane, [companyId, workType]))) return;
  const next = await tx.one<{ ready_at: string | Date | null }>(FILING_QUEUE_SQL.statusLaneReadyAt, [companyId, workType]);
  if (next?.ready_at == null) await tx.run(FILING_QUEUE_SQL.deleteStatusLane, [companyId, workType]);
  else await tx.run(FILING_QUEUE_SQL.setStatusLaneReadyAt, [companyId, workType, iso(next.ready_at)]);
}

