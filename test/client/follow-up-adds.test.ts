/**
 * The SDK has an add for every kind of follow-up (SPEC §15): `addWorkItem<Kind>`. The SDK imports
 * nothing of the server but types, so the check is here: a new kind in domain/work-item-kinds.ts
 * is a compile error in this file until the SDK has its method.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { WorkItemClient, type AddWorkItemOptions } from "../../src/client/client.ts";
import type { AddWorkItemResult } from "../../src/client/types.ts";
import { FOLLOW_UP_KINDS, type FollowUpKind } from "../../src/domain/work-item-kinds.ts";

type FollowUpAdds = { [K in FollowUpKind as `addWorkItem${Capitalize<K>}`]: (body: never, options?: AddWorkItemOptions) => Promise<AddWorkItemResult> };

test("the SDK has an add for every kind of follow-up", () => {
  const adds: FollowUpAdds = WorkItemClient.prototype;
  for (const kind of FOLLOW_UP_KINDS) {
    const name = `addWorkItem${kind[0]!.toUpperCase()}${kind.slice(1)}` as keyof FollowUpAdds;
    assert.equal(typeof adds[name], "function", name);
  }
});
