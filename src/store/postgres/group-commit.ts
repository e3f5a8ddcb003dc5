/**
 * Group commit: calls that arrive together are handed to `runGroup` as one group (one
 * transaction, one WAL flush), and each caller's promise settles with its own result once that
 * group has committed.
 *
 * Calls are spread over a few lanes by a key (the company): a lane runs one group at a time,
 * and lanes run in parallel on different connections. Calls of one company always share a
 * lane, so they queue in this process instead of fighting over the same Open batch row lock;
 * other companies are not held up behind them. A call that is a transaction's worth on its own
 * (a bulk add) runs as a group of its own, in its turn in the lane.
 */

export type GroupResult<O> = { outcome: O } | { error: unknown };

export interface GroupCommitOptions<I, O> {
  lanes: number;
  /** Most calls per group; the rest wait for the next group of their lane. */
  maxGroupSize: number;
  laneKey: (input: I) => number;
  /** A call that forms a group on its own; default none. */
  alone?: (input: I) => boolean;
  /** Runs one group; returns one result per input in order, or throws to fail them all. */
  runGroup: (inputs: I[]) => Promise<Array<GroupResult<O>>>;
}

interface Job<I, O> {
  input: I;
  resolve: (outcome: O) => void;
  reject: (error: unknown) => void;
}

interface Lane<I, O> {
  pending: Array<Job<I, O>>;
  active: boolean;
}

export class GroupCommitter<I, O> {
  private readonly lanes: Array<Lane<I, O>>;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: GroupCommitOptions<I, O>) {
    this.lanes = Array.from({ length: Math.max(1, options.lanes) }, () => ({ pending: [], active: false }));
  }

  submit(input: I): Promise<O> {
    const lane = this.lanes[Math.abs(this.options.laneKey(input)) % this.lanes.length]!;
    return new Promise<O>((resolve, reject) => {
      lane.pending.push({ input, resolve, reject });
      if (!lane.active) {
        lane.active = true;
        // One turn of the event loop lets the calls that arrived with this one join its group.
        setImmediate(() => void this.run(lane));
      }
    });
  }

  /** Resolves once every submitted call has settled. */
  drain(): Promise<void> {
    if (this.lanes.every((lane) => !lane.active)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** How many of the calls at the head of the queue form the next group. */
  private groupSize(pending: Array<Job<I, O>>): number {
    const { alone, maxGroupSize } = this.options;
    if (!alone) return maxGroupSize;
    if (alone(pending[0]!.input)) return 1;
    let size = 1;
    while (size < maxGroupSize && size < pending.length && !alone(pending[size]!.input)) size++;
    return size;
  }

  private async run(lane: Lane<I, O>): Promise<void> {
    while (lane.pending.length > 0) {
      const jobs = lane.pending.splice(0, this.groupSize(lane.pending));
      let results: Array<GroupResult<O>>;
      try {
        results = await this.options.runGroup(jobs.map((job) => job.input));
      } catch (error) {
        for (const job of jobs) job.reject(error);
        continue;
      }
      jobs.forEach((job, index) => {
        const result = results[index];
        if (result === undefined) job.reject(new Error("group commit returned no result for a call"));
        else if ("outcome" in result) job.resolve(result.outcome);
        else job.reject(result.error);
      });
    }
    lane.active = false;
    if (this.lanes.every((each) => !each.active)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
