/**
 * The SQL that implements the filing order, held to the pure reference (src/scheduler/order.ts)
 * on generated cases, on both stores (STYLE.md habit 15): items of several companies with
 * on-time, late and no deadlines, added in a random interleaving, queued, and claimed in claims
 * of random sizes. The claims, one after the other, give exactly `fileOrder`'s sequence.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { fileOrder, type QueuedItem } from "../../src/scheduler/order.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import { availableBackends } from "../helpers/backends.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const NOW_MS = Date.parse("2026-11-25T10:00:00.000Z");
const HOUR = 3600_000;
/** Deadlines the cases draw from: two passed, two to come, and none. */
const DEADLINES = [NOW_MS - 26 * HOUR, NOW_MS - 2 * HOUR, NOW_MS + HOUR, NOW_MS + 25 * HOUR, null].map((ms) => (ms === null ? null : new Date(ms).toISOString()));
const FAR = new Date(NOW_MS + 365 * 24 * HOUR).toISOString();
/** Before FAR: items claimed until FAR are not due again then. */
const NEARLY_FAR = new Date(NOW_MS + 364 * 24 * HOUR).toISOString();

const queueCase = fc.record({
  companies: fc.integer({ min: 1, max: 6 }),
  items: fc.array(fc.record({ company: fc.nat(5), deadline: fc.nat(DEADLINES.length - 1) }), { minLength: 1, maxLength: 30 }),
  claimSizes: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 8 }),
});

for (const backend of await availableBackends()) {
  describe(`filing order in SQL [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, async () => {
    const db = await backend.create();
    const store: Store = await openStore(db.location);
    after(async () => {
      await store.close();
      await db.cleanup();
    });
    let nextCompany = 1000;

    test("claims one after the other give the reference order", async () => {
      await fc.assert(
        fc.asyncProperty(queueCase, async ({ companies, items, claimSizes }) => {
          // Fresh companies for each case: their turns start at 0, as the reference's do.
          const ids = Array.from({ length: companies }, () => (nextCompany += 1));
          for (const companyId of ids) await store.createCompany({ companyId, name: `c${companyId}` });
          const added: QueuedItem[] = [];
          for (const { company, deadline } of items) {
            const companyId = ids[company % companies]!;
            const deadlineAt = DEADLINES[deadline]!;
            const outcome = await store.addWorkItem({
              companyId,
              workType: WORK_TYPE_AUTHORITY_RVDM,
              customerReference: "order",
              documentReference: null,
              webhookUrl: null,
              request: validWorkItem(),
              batchMaxItems: 7,
              ...(deadlineAt ? { deadlineAt } : {}),
            });
            assert.equal(outcome.kind, "created");
            if (outcome.kind === "created") added.push({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, workItemId: outcome.key.workItemId, deadlineAt });
          }
          const queuedAt = new Date(NOW_MS).toISOString();
          for (const companyId of ids) await store.queueBatches(companyId, queuedAt);

          const claimed: number[] = [];
          // A failed case (fast-check shrinks after one) must not leave items for the next.
          const drain = async () => {
            while ((await store.claimFilingWork({ owner: "drain", now: NEARLY_FAR, dueBefore: NEARLY_FAR, leaseExpiresAt: FAR, limit: 100 })).length > 0);
          };
          for (let round = 0; claimed.length < added.length && round < 100; round += 1) {
            // A millisecond on per claim: turns are told apart by the claim's time.
            const now = new Date(NOW_MS + 1 + round).toISOString();
            const limit = claimSizes[round % claimSizes.length]!;
            const items = await store.claimFilingWork({ owner: "order-test", now, dueBefore: now, leaseExpiresAt: FAR, limit });
            if (!(items.length > 0 && items.length <= limit)) await drain();
            assert.ok(items.length > 0 && items.length <= limit, `claim ${round} gave ${items.length} of ${limit}`);
            claimed.push(...items.map((item) => item.workItemId));
          }
          await drain();
          const expected = fileOrder(added, new Date(NOW_MS).toISOString()).map((item) => item.workItemId);
          assert.deepEqual(claimed, expected);
        }),
        { numRuns: backend.name === "postgres" ? 30 : 60, seed: 20261125 },
      );
    });
  });
}
