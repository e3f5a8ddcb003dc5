/**
 * The answer of a bulk add as its idempotency record keeps it (`idempotency_keys.response`,
 * migrations 0008): `{"keys": [[workBatchId, workItemId], …], "refused": [{index, errors}, …]}`.
 * Both backends write this shape (SQLite in its writer thread, PostgreSQL in
 * `wia_add_work_item_bulk`) and read it back through `decodeBulkAnswer`.
 */
import type { BatchKey } from "../../domain/views.ts";
import type { ItemRefusal } from "../store.ts";

export interface BulkAnswer {
  keys: BatchKey[];
  refused: ItemRefusal[];
}

/** The stored text; `refusedJson` is the refused items as JSON text already. */
export function encodeBulkAnswer(keys: ReadonlyArray<readonly [number, number]>, refusedJson: string): string {
  return `{"keys":${JSON.stringify(keys)},"refused":${refusedJson}}`;
}

/** The stored answer, as text (SQLite) or as the value the driver parsed (PostgreSQL's json). */
export function decodeBulkAnswer(stored: unknown): BulkAnswer {
  const value = (typeof stored === "string" ? JSON.parse(stored) : stored) as { keys?: unknown; refused?: unknown } | null;
  if (!value || !Array.isArray(value.keys) || !Array.isArray(value.refused)) throw new Error("a bulk idempotency record without its answer");
  const keys = (value.keys as Array<[number | string, number | string]>).map(([workBatchId, workItemId]) => ({
    workBatchId: Number(workBatchId),
    workItemId: Number(workItemId),
  }));
  return { keys, refused: value.refused as ItemRefusal[] };
}
