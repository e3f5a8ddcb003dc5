/**
 * The views the database writes as JSON (src/store/core/item-json.ts) must be the views rows.ts
 * maps, item for item: the read routes answer the first, everything else uses the second.
 */
import assert from "node:assert/strict";
import type { Store } from "../../src/store/store.ts";

/** Compares every item of the company, one by one and as a page; returns how many there were. */
export async function assertJsonViewsMatch(store: Store, companyId: number): Promise<number> {
  const views = await store.listWorkItems(companyId, { limit: 10_000 });
  const page = await store.listWorkItemsJson(companyId, { limit: 10_000 });
  assert.deepEqual(
    page.map((item) => item.workItemId),
    views.map((view) => view.workItemId),
  );
  assert.deepEqual(
    page.map((item) => JSON.parse(item.json) as unknown),
    views,
    "the page the database wrote is the mapped page",
  );
  for (const view of views) {
    const text = await store.getWorkItemJson(companyId, view.workItemId);
    assert.deepEqual(JSON.parse(text ?? "null"), view, `item ${view.workItemId} as the database wrote it`);
  }
  return views.length;
}
