/** Bounded concurrency without a queue library: `limit` runners pull from one shared cursor. */

/**
 * Runs `task` over `items`, at most `limit` at a time, and resolves when all are done. A task
 * that throws rejects the whole call at once (callers that must let the others finish catch
 * inside `task`).
 */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
}

/** At most `limit` holders at once; the rest wait in line, first come first served. */
export class Slots {
  private held = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}

  async take(): Promise<void> {
    if (this.held < this.limit) {
      this.held += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held -= 1;
  }

  /** Runs `work` in a slot. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await work();
    } finally {
      this.give();
    }
  }
}

/** A promise and the function that resolves it: a one-off wake-up call. */
export function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** A wake-up call any number may wait for: `next()` resolves at the following `wake()`. */
export class Wakeup {
  private pending = signal();

  next(): Promise<void> {
    return this.pending.promise;
  }

  wake(): void {
    const woken = this.pending;
    this.pending = signal();
    woken.resolve();
  }
}
