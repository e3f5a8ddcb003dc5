/** Items added straight through the store (no HTTP), for the store's own tests. */
import assert from "node:assert/strict";
import type { BatchKey } from "../../src/domain/views.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import type { Store } from "../../src/store/store.ts";
import { validWorkItem } from "./test-app.ts";

/** `count` valid items of the company, the i-th with `deadlines[i]` when given; their batch keys. */
export async function addItems(store: Store, companyId: number, count: number, webhookUrl: string | null = null, deadlines: string[] = []): Promise<BatchKey[]> {
  const keys = [];
  for (let i = 0; i < count; i++) {
    const deadlineAt = deadlines[i];
    const outcome = await store.addWorkItem({
      companyId,
      workType: WORK_TYPE_AUTHORITY_RVDM,
      customerReference: `ref-${i}`,
      documentReference: null,
      webhookUrl,
      request: validWorkItem(),
      batchMaxItems: 1000,
      ...(deadlineAt ? { deadlineAt } : {}),
    });
    assert.equal(outcome.kind, "created");
    if (outcome.kind === "created") keys.push(outcome.key);
  }
  return keys;
}
