/**
 * The offline optimum of bench:deadlines (SPEC §14): how many items could have been submitted by
 * their deadline at best, knowing every arrival in advance, with the authority's capacity.
 *
 * The model: every item is one job of the same length (`jobMs`: its calls to the authority) on
 * `servers` parallel servers (the calls the authority takes at once). Time is cut into slots of
 * one job length from `originMs`; a slot that overlaps a `down` window (the outage) has no
 * servers. An item can start in the first slot that begins at or after its arrival, and it is on
 * time when `doneAfterMs` into its job (the end of its submit call) is at or before its deadline.
 *
 * For equal jobs in slots, earliest deadline first, skipping the items that can no longer make
 * it, is optimal: whatever an optimal schedule runs in a slot can be swapped for the earliest
 * deadlines that still fit without losing an item. The slots are the one approximation: an item
 * waits for the next slot boundary, so the true optimum can be higher by a few items in a
 * surge, and a bot's fraction of this optimum can exceed 1 by as much.
 */

/** One item: when it arrived and by when its submit must be done, in ms on any one clock. */
export interface OptimumJob {
  arrivedAt: number;
  deadlineAt: number;
}

export interface OptimumCapacity {
  /** Jobs at once. */
  servers: number;
  /** The length of every job, and of a slot. */
  jobMs: number;
  /** How far into its job an item counts as submitted; at most jobMs. */
  doneAfterMs: number;
  /** The start of the first slot; default the first arrival. */
  originMs?: number;
  /** Windows [from, to) with no capacity. */
  down?: Array<{ from: number; to: number }>;
}

/** Which items the optimal schedule gets in on time (`onTime[i]` for `jobs[i]`), and how many. */
export function deadlineOptimum(jobs: readonly OptimumJob[], capacity: OptimumCapacity): { count: number; onTime: boolean[] } {
  const { servers, jobMs, doneAfterMs } = capacity;
  if (!(servers >= 1 && jobMs > 0 && doneAfterMs > 0 && doneAfterMs <= jobMs)) throw new Error(`deadlineOptimum: bad capacity ${JSON.stringify(capacity)}`);
  const onTime = jobs.map(() => false);
  if (jobs.length === 0) return { count: 0, onTime };
  const byArrival = jobs.map((_, i) => i).sort((a, b) => jobs[a]!.arrivedAt - jobs[b]!.arrivedAt);
  const origin = capacity.originMs ?? jobs[byArrival[0]!]!.arrivedAt;
  const down = capacity.down ?? [];
  const lastDeadline = Math.max(...jobs.map((job) => job.deadlineAt));
  const earliestDeadline = (a: number, b: number) => jobs[a]!.deadlineAt - jobs[b]!.deadlineAt || a - b;
  /** Arrived, not started, not yet past saving. */
  let waiting: number[] = [];
  let next = 0;
  for (let slot = 0; ; slot++) {
    let start = origin + slot * jobMs;
    if (start + doneAfterMs > lastDeadline) break;
    if (waiting.length === 0) {
      if (next === byArrival.length) break;
      // Nothing waits: go straight to the slot of the next arrival.
      const arrival = jobs[byArrival[next]!]!.arrivedAt;
      if (arrival > start) {
        slot = Math.ceil((arrival - origin) / jobMs);
        start = origin + slot * jobMs;
      }
    }
    while (next < byArrival.length && jobs[byArrival[next]!]!.arrivedAt <= start) waiting.push(byArrival[next++]!);
    // Past saving now, and so in every later slot too: skipped.
    waiting = waiting.filter((job) => start + doneAfterMs <= jobs[job]!.deadlineAt);
    if (down.some((window) => start < window.to && start + jobMs > window.from)) continue;
    waiting.sort(earliestDeadline);
    for (const job of waiting.splice(0, servers)) onTime[job] = true;
  }
  return { count: onTime.filter(Boolean).length, onTime };
}
