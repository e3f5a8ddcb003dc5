/** Time intervals [start, end) in ms, and a running sum read now and then (the simulator's `inFlightMs`). */

export type Interval = readonly [number, number];

/** The intervals merged where they touch or overlap, in order; empty ones dropped. */
export function union(intervals: Iterable<Interval>): Interval[] {
  const sorted = [...intervals].filter(([start, end]) => end > start).sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [start, end] of sorted) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

/** What of `from` lies outside every interval of `cut`. */
export function subtract(from: Iterable<Interval>, cut: Iterable<Interval>): Interval[] {
  const holes = union(cut);
  const left: Interval[] = [];
  for (const [start, end] of union(from)) {
    let at = start;
    for (const [holeStart, holeEnd] of holes) {
      if (holeEnd <= at || holeStart >= end) continue;
      if (holeStart > at) left.push([at, holeStart]);
      at = Math.max(at, holeEnd);
    }
    if (at < end) left.push([at, end]);
  }
  return left;
}

/** Where at least `k` of the intervals overlap (k ≥ 1), merged. */
export function coveredAtLeast(intervals: Iterable<Interval>, k: number): Interval[] {
  const edges = [...intervals].filter(([start, end]) => end > start).flatMap(([start, end]): Array<[number, number]> => [[start, 1], [end, -1]]);
  // At one instant, ends before starts: [a, b) and [b, c) do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const covered: Interval[] = [];
  let count = 0;
  let since = 0;
  for (const [at, step] of edges) {
    if (count < k && count + step >= k) since = at;
    if (count >= k && count + step < k && at > since) covered.push([since, at]);
    count += step;
  }
  return union(covered);
}

/** Total length of the union. */
export const lengthOf = (intervals: Iterable<Interval>) => union(intervals).reduce((sum, [start, end]) => sum + (end - start), 0);

/**
 * A sum that only grows, read at times (`add(at, value)`, in time order): its growth over a
 * stretch of time, straight-line between reads (and flat beyond the first and last).
 */
export class RunningSum {
  private readonly reads: Array<[number, number]> = [];

  add(at: number, value: number): void {
    const last = this.reads.at(-1);
    if (last && at <= last[0]) return;
    this.reads.push([at, value]);
  }

  /** The sum at `at`. */
  valueAt(at: number): number {
    const reads = this.reads;
    if (reads.length === 0) return 0;
    if (at <= reads[0]![0]) return reads[0]![1];
    let low = 0;
    let high = reads.length - 1;
    if (at >= reads[high]![0]) return reads[high]![1];
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (reads[middle]![0] <= at) low = middle;
      else high = middle;
    }
    const [t0, v0] = reads[low]!;
    const [t1, v1] = reads[high]!;
    return v0 + ((v1 - v0) * (at - t0)) / (t1 - t0);
  }

  /** Its growth within the intervals. */
  growthOver(intervals: Iterable<Interval>): number {
    return union(intervals).reduce((sum, [start, end]) => sum + this.valueAt(end) - this.valueAt(start), 0);
  }
}
