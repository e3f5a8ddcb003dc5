/**
 * Group commit: calls that arrive together are handed to `runGroup` as one group (one
 * transaction, one WAL flush), and each caller's promise settles with its own result once that
 * group has committed.
 *
 * Calls are spread over a few channels by a key (the company): a channel runs one group at a time,
 * and channels run in parallel on different connections. Calls of one company always share a
 * channel, so they queue in this process instead of fighting over the same Open batch row lock;
 * other companies are not held up behind them. A call that is a transaction's worth on its own
 * (a bulk add) runs as a group of its own, in its turn in the channel.
 */

export type GroupResult<O> = { outcome: O } | { error: unknown };

export interface GroupCommitOptions<I, O> {
  channels: number;
  /** Most calls per group; the rest wait for the next group of their channel. */
  maxGroupSize: number;
  channelKey: (input: I) => number;
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

interface Channel<I, O> {
  pending: Array<Job<I, O>>;
  active: boolean;
}

export class GroupCommitter<I, O> {
  private readonly channels: Array<Channel<I, O>>;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: GroupCommitOptions<I, O>) {
    this.channels = Array.from({ length: Math.max(1, options.channels) }, () => ({ pending: [], active: false }));
  }

  submit(input: I): Promise<O> {
    const channel = this.channels[Math.abs(this.options.channelKey(input)) % this.channels.length]!;
    return new Promise<O>((resolve, reject) => {
      channel.pending.push({ input, resolve, reject });
      if (!channel.active) {
        channel.active = true;
        // One turn of the event loop lets the calls that arrived with this one join its group.
        setImmediate(() => void this.run(channel));
      }
    });
  }

  /** Resolves once every submitted call has settled. */
  drain(): Promise<void> {
    if (this.channels.every((channel) => !channel.active)) return Promise.resolve();
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

  private async run(channel: Channel<I, O>): Promise<void> {
    while (channel.pending.length > 0) {
      const jobs = channel.pending.splice(0, this.groupSize(channel.pending));
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
    channel.active = false;
    if (this.channels.every((each) => !each.active)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
