/**
 * What follows each step that deleted rows, of the item sweep and of a company's erase (SPEC §22):
 *
 * - Space comes back: the embedded store hands free pages back to the file system, a bounded
 *   chunk at a time once there is a chunk worth it, so a hand-back is one short write
 *   transaction like a step.
 *   PostgreSQL's autovacuum does its part by itself (Store.returnFreePages is a no-op there).
 * - Intake is not starved: on a single-writer store every step holds the one write lock, and
 *   intake's writer, refused it, sleeps in SQLite's busy handler for 1, 2, 5, 10 … ms before it
 *   tries again. Steps back to back left it so few chances that adds waited hundreds of
 *   milliseconds (p99 440 ms against 13 ms, docs/performance.md). So the eraser pauses after each
 *   step for a multiple of the step's own time: the lock is free three quarters of the time, and
 *   an add that missed one window finds the next within a few of its retries.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Store } from "../store/store.ts";

/**
 * Pages handed back after a step: 4 MiB at SQLite's 4 KiB pages, more than a step of the item
 * sweep or of an erase frees (tens of pages), so the free list does not grow while they run, and
 * a chunk still takes only a few milliseconds (docs/performance.md, "Erasing and exporting").
 */
export const FREE_PAGES_PER_STEP = 1024;
/**
 * …once this many are free (1 MiB): a hand-back is a commit of its own, and one after every step
 * of the item sweep halved its rate and doubled the time intake waited on it.
 */
export const FREE_PAGES_WORTH_A_STEP = 256;

/** On a single-writer store, the pause after a step, as a multiple of the step's time… */
export const PAUSE_PER_STEP_TIME = 3;
/**
 * …and at most this long: a step's time includes its own wait for the lock while intake held
 * it, which says nothing of how long the step kept intake out.
 */
export const MAX_PAUSE_MS = 20;

/** After a step that began at `startedAt` (performance.now()) and deleted `rows` rows. */
export async function afterErasingStep(store: Store, rows: number, startedAt: number): Promise<void> {
  if (rows === 0) return;
  await store.returnFreePages({ atLeast: FREE_PAGES_WORTH_A_STEP, atMost: FREE_PAGES_PER_STEP });
  if (store.flags.singleWriter) await sleep(Math.min(MAX_PAUSE_MS, (performance.now() - startedAt) * PAUSE_PER_STEP_TIME));
}
