/** Bounded concurrency without a queue library: `limit` lanes pull from one shared cursor. */

/**
 * Runs `task` over `items`, at most `limit` at a time, and resolves when all are done. A task
 * that throws rejects the whole call at once (callers that must let the others finish catch
 * inside `task`).
 */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
