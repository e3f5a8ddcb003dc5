/**
 * The crunch of bench:deadlines (SPEC §14), as a plan: which company adds which item when, and
 * by when it is due. Pure and seeded, so every build replays the same arrivals.
 *
 * Deadlines are spaced evenly through the arrival window (the last one at its end). The items
 * of one deadline arrive over the `leadMs` before it, more and more of them as it nears (the
 * surge before a cutoff: half of them in the last quarter of the lead), and never later than
 * `lastCallMs` before it. One company in `bigEvery` is big and sends `bigShare` of the items;
 * the others send the rest, a few each.
 */

export interface CrunchShape {
  companies: number;
  /** Companies 1, 1 + bigEvery, 1 + 2·bigEvery, … are the big ones. */
  bigEvery: number;
  /** The share of the items the big companies send (0–1). */
  bigShare: number;
  items: number;
  /** Arrivals fall in [0, arrivalMs]. */
  arrivalMs: number;
  deadlines: number;
  /** How long before its deadline an item may arrive at the earliest. */
  leadMs: number;
  /** How long before its deadline an item arrives at the latest. */
  lastCallMs: number;
  seed: number;
}

export interface PlannedItem {
  /** 0-based, in arrival order. */
  index: number;
  companyId: number;
  big: boolean;
  /** When it is added, in ms from the start of the crunch. */
  atMs: number;
  /** Its deadline, in ms from the start of the crunch. */
  deadlineMs: number;
}

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const isBig = (shape: Pick<CrunchShape, "bigEvery">, companyId: number) => (companyId - 1) % shape.bigEvery === 0;

/** The deadlines, in ms from the start: evenly spaced, the last at the end of the arrivals. */
export const deadlinesOf = (shape: Pick<CrunchShape, "arrivalMs" | "deadlines">) =>
  Array.from({ length: shape.deadlines }, (_, k) => Math.round((shape.arrivalMs * (k + 1)) / shape.deadlines));

export function planCrunch(shape: CrunchShape): PlannedItem[] {
  const random = seededRandom(shape.seed);
  const all = Array.from({ length: shape.companies }, (_, i) => i + 1);
  const big = all.filter((id) => isBig(shape, id));
  const small = all.filter((id) => !isBig(shape, id));
  if (big.length === 0 || small.length === 0) throw new Error("the crunch needs big and small companies: raise --companies or lower --big-every");
  const pick = (ids: number[]) => ids[Math.floor(random() * ids.length)]!;
  const deadlines = deadlinesOf(shape);
  const items = Array.from({ length: shape.items }, (_, i) => {
    const deadlineMs = deadlines[i % deadlines.length]!;
    const lead = Math.max(0, Math.min(shape.leadMs, deadlineMs) - shape.lastCallMs);
    // u² puts half the arrivals in the last quarter of the lead: the surge.
    const atMs = Math.round(deadlineMs - shape.lastCallMs - lead * random() ** 2);
    const isBigItem = random() < shape.bigShare;
    const companyId = pick(isBigItem ? big : small);
    return { companyId, big: isBigItem, atMs, deadlineMs };
  });
  return items.sort((a, b) => a.atMs - b.atMs).map((item, index) => ({ index, ...item }));
}
