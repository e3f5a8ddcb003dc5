/**
 * The filing order (SPEC §14), as pure functions: no database, no clock.
 *
 * Glossary:
 * - lane: a company's items of one work type and one deadline that wait to be filed. The store
 *   keeps one row per lane (filing_lanes) and the items of a lane in intake order.
 * - tier: a deadline not passed yet (`onTime`), passed (`late`), or no deadline at all (`none`).
 * - turn: when the queue last served a company, as a sequence number (`servedSeq`) that grows
 *   with every item handed out: the company with the smallest one goes next.
 *
 * The order: on-time items by earliest deadline, then late ones by earliest deadline (a late
 * item has missed already and must not make an on-time item miss too), then items without a
 * deadline. Within one deadline the company served least recently goes next (ties by company
 * id), and within a company intake order (the item id). An item in retry backoff is not due; when
 * its backoff is over it stands where its deadline, company and id put it.
 *
 * `fileOrder` is the policy, item by item. A claim runs it too, over a few candidates: the first
 * due items of the first lanes in lane order (store/core/filing-queue.ts). The property test in
 * test/scheduler/ holds the store's claims, one after another, to `fileOrder` over every item.
 */

/** "No deadline" in a lane's key (a key column cannot be NULL). */
export const NO_DEADLINE = "9999-12-31T00:00:00.000Z";

export type Tier = "onTime" | "late" | "none";
export const TIERS: readonly Tier[] = ["onTime", "late", "none"];

export function tierOf(deadlineAt: string | null, now: string): Tier {
  if (deadlineAt === null || deadlineAt === NO_DEADLINE) return "none";
  return Date.parse(deadlineAt) >= Date.parse(now) ? "onTime" : "late";
}

/** A lane as the store reads it: its key and its company's turn. */
export interface Lane {
  companyId: number;
  workType: string;
  /** ISO 8601 instant, or null for items without a deadline. */
  deadlineAt: string | null;
  servedSeq: number;
}

const instant = (deadlineAt: string | null) => (deadlineAt === null ? Number.POSITIVE_INFINITY : Date.parse(deadlineAt));

/** Lane order: tier, deadline, turn, company, work type. */
export function compareLanes(a: Lane, b: Lane, now: string): number {
  const tier = TIERS.indexOf(tierOf(a.deadlineAt, now)) - TIERS.indexOf(tierOf(b.deadlineAt, now));
  if (tier !== 0) return tier;
  const [x, y] = [instant(a.deadlineAt), instant(b.deadlineAt)];
  if (x !== y) return x < y ? -1 : 1;
  if (a.servedSeq !== b.servedSeq) return a.servedSeq - b.servedSeq;
  if (a.companyId !== b.companyId) return a.companyId - b.companyId;
  return a.workType < b.workType ? -1 : a.workType > b.workType ? 1 : 0;
}

/** The turn a company gets when it was served at position `position` of a claim made at `nowMs`. */
export const servedSeqAt = (nowMs: number, position: number) => nowMs * 1000 + position;

/** An item as the reference order sees it. */
export interface QueuedItem {
  companyId: number;
  workType: string;
  workItemId: number;
  deadlineAt: string | null;
}

/**
 * The reference: the order in which `items` are filed when all are due at `now`, given each
 * company's turn (`servedSeq`, 0 when never served). Item by item: the first lane in lane order
 * gives its first item, and its company's turn moves to the back.
 */
export function fileOrder(items: readonly QueuedItem[], now: string, servedSeq: ReadonlyMap<number, number> = new Map()): QueuedItem[] {
  const turns = new Map(servedSeq);
  const lanes = new Map<string, QueuedItem[]>();
  for (const item of [...items].sort((a, b) => a.workItemId - b.workItemId)) {
    const key = `${item.companyId}\u0000${item.workType}\u0000${item.deadlineAt}`;
    lanes.set(key, [...(lanes.get(key) ?? []), item]);
  }
  const order: QueuedItem[] = [];
  let tick = Math.max(0, ...turns.values());
  while (lanes.size > 0) {
    let best: { key: string; lane: Lane } | undefined;
    for (const [key, queued] of lanes) {
      const { companyId, workType, deadlineAt } = queued[0]!;
      const lane: Lane = { companyId, workType, deadlineAt, servedSeq: turns.get(companyId) ?? 0 };
      if (!best || compareLanes(lane, best.lane, now) < 0) best = { key, lane };
    }
    const queued = lanes.get(best!.key)!;
    order.push(queued.shift()!);
    if (queued.length === 0) lanes.delete(best!.key);
    tick += 1;
    turns.set(best!.lane.companyId, tick);
  }
  return order;
}
