/**
 * Space comes back after a sweep or an erase (SPEC §22): after each step that deleted rows, the
 * embedded store hands free pages back to the file system, a bounded chunk at a time, so each
 * hand-back is one short write transaction like the step itself and intake never waits long on
 * it. PostgreSQL's autovacuum does its part by itself (Store.returnFreePages is a no-op there).
 */
import type { Store } from "../store/store.ts";

/**
 * Pages handed back after one step: 4 MiB at SQLite's 4 KiB pages, more than a step of the item
 * sweep or of an erase frees (tens of pages), so the free list does not grow while they run, and
 * a chunk still takes only a few milliseconds (docs/performance.md, "Erasing and exporting").
 */
export const FREE_PAGES_PER_STEP = 1024;

/** After a step that deleted `rows` rows: one chunk of free pages handed back. */
export async function returnFreedPages(store: Store, rows: number): Promise<void> {
  if (rows > 0) await store.returnFreePages(FREE_PAGES_PER_STEP);
}
