/**
 * The operators' list across companies (SPEC §25; src/store/core/operator-items.ts) on each
 * store, held to its pure rule (src/domain/item-order.ts) on generated queries: paged to the end
 * from every cursor, in both orders, it lists exactly the items the filters take, each once, in
 * the rule's order, with runs of equal deadlines longer than a page and items without one; its
 * count is the number of those items, exact or (above the cap, in a store larger than the
 * sample) an estimate above it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { comparePositions, positionOf, type ItemOrder } from "../../src/domain/item-order.ts";
import type { WorkItemStatus } from "../../src/domain/views.ts";
import type { OperatorItemFilters, OperatorWorkItemView, Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, writePastStore } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { addItems } from "../helpers/store-items.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

recordStoreStatements();

const STATUSES: WorkItemStatus[] = ["New", "InProgress", "Submitted", "Successful", "Failed", "Cancelled", "Withdrawn"];
/** Few deadlines, so that runs of equal ones are longer than a page. */
const DEADLINES = ["2030-01-01T11:00:00.000Z", "2030-01-02T11:00:00.000Z", "2030-01-02T11:00:00.001Z", "2030-01-05T11:00:00.000Z"];
const COMPANIES = [31, 32, 33];
const ITEMS_PER_COMPANY = 40;
const SEED = 20261128;

/** A deterministic mix: item i of company c gets a status and a deadline (or none). */
const random = (n: number) => {
  const x = Math.sin(n * 12.9898 + SEED) * 43758.5453;
  return x - Math.floor(x);
};

type Query = OperatorItemFilters & { order: ItemOrder; limit: number };

function expected(all: OperatorWorkItemView[], query: Query): number[] {
  return all
    .filter(
      (item) =>
        (query.companyIds === undefined || query.companyIds.includes(item.companyId)) &&
        (query.status === undefined || item.status === query.status) &&
        (query.kind === undefined || item.kind === query.kind) &&
        (query.deadlineBefore === undefined || (item.deadlineAt !== null && item.deadlineAt < query.deadlineBefore)) &&
        (query.deadlineAtOrAfter === undefined || (item.deadlineAt !== null && item.deadlineAt >= query.deadlineAtOrAfter)),
    )
    .sort((a, b) => comparePositions(positionOf(a, query.order), positionOf(b, query.order)))
    .map((item) => item.workItemId);
}

/** Every page from the first, each after the last item of the one before, until a short page. */
async function pageToTheEnd(store: Store, query: Query): Promise<number[]> {
  const seen: number[] = [];
  let last: OperatorWorkItemView | undefined;
  for (let pages = 0; pages < 500; pages++) {
    const page = await store.listAllWorkItems({ ...query, ...(last ? { after: positionOf(last, query.order) } : {}) });
    seen.push(...page.map((item) => item.workItemId));
    if (page.length < query.limit) return seen;
    last = page.at(-1);
  }
  throw new Error("the pages never ended");
}

const queries: fc.Arbitrary<Query> = fc.record(
  {
    order: fc.constantFrom<ItemOrder>("newest", "deadline"),
    limit: fc.integer({ min: 1, max: 9 }),
    companyIds: fc.option(fc.subarray(COMPANIES, { minLength: 1 }), { nil: undefined }),
    status: fc.option(fc.constantFrom(...STATUSES), { nil: undefined }),
    kind: fc.option(fc.constant("create" as const), { nil: undefined, freq: 5 }),
    deadlineBefore: fc.option(fc.constantFrom(...DEADLINES), { nil: undefined, freq: 3 }),
    deadlineAtOrAfter: fc.option(fc.constantFrom(...DEADLINES), { nil: undefined, freq: 3 }),
  },
  { requiredKeys: ["order", "limit"] },
);

for (const backend of await availableBackends()) {
  describe(`operators' list across companies [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let all: OperatorWorkItemView[];

    before(async () => {
      const fresh = await openFreshStore(backend);
      ({ store, cleanup } = fresh);
      for (const companyId of COMPANIES) {
        await store.createCompany({ companyId, name: `Company ${companyId}` });
        const deadlines = Array.from({ length: ITEMS_PER_COMPANY }, (_, i) => DEADLINES[Math.floor(random(companyId * 100 + i) * DEADLINES.length)]!);
        const keys = await addItems(store, companyId, ITEMS_PER_COMPANY, null, deadlines);
        for (const [i, key] of keys.entries()) {
          const status = STATUSES[Math.floor(random(companyId * 1000 + i) * STATUSES.length)]!;
          const undated = random(companyId * 7 + i * 3) < 0.2;
          await writePastStore(fresh.location, `UPDATE work_items SET status = $1${undated ? ", deadline_at = NULL" : ""} WHERE company_id = $2 AND work_item_id = $3`, [status, companyId, key.workItemId]);
        }
      }
      // The counters the transitions keep, as they would be for these statuses.
      for (const companyId of COMPANIES) await writePastStore(fresh.location, "DELETE FROM company_item_counts WHERE company_id = $1", [companyId]);
      await writePastStore(
        fresh.location,
        "INSERT INTO company_item_counts (company_id, status, item_count) SELECT company_id, status, COUNT(*) FROM work_items WHERE status NOT IN ('New', 'InProgress') GROUP BY company_id, status",
      );
      all = await store.listAllWorkItems({ order: "newest", limit: 500 });
      assert.equal(all.length, COMPANIES.length * ITEMS_PER_COMPANY);
      assert.ok(all.some((item) => item.deadlineAt === null) && all.some((item) => item.status === "New" && item.deadlineAt === null), "items without a deadline, New ones among them");
    });
    after(() => cleanup());

    test("the deadline order: unfinished first, the earliest deadline first, items without one last, ties by id", async () => {
      const ids = await pageToTheEnd(store, { order: "deadline", limit: 7 });
      assert.deepEqual(ids, expected(all, { order: "deadline", limit: 7 }));
      const byId = new Map(all.map((item) => [item.workItemId, item]));
      const firstFinished = ids.findIndex((id) => ["Successful", "Failed", "Cancelled", "Withdrawn"].includes(byId.get(id)!.status));
      assert.ok(firstFinished > 0 && ids.slice(firstFinished).every((id) => ["Successful", "Failed", "Cancelled", "Withdrawn"].includes(byId.get(id)!.status)));
      assert.equal(byId.get(ids[firstFinished - 1]!)!.deadlineAt, null, "the unfinished items without a deadline end their part");
    });

    test("paged to the end, every generated query lists what its filters take, each once, in its order", async () => {
      await fc.assert(
        fc.asyncProperty(queries, async (query) => {
          assert.deepEqual(await pageToTheEnd(store, query), expected(all, query), JSON.stringify(query));
        }),
        { numRuns: backend.name === "sqlite" ? 150 : 60 },
      );
    });

    test("the count is the number of items the filters take: exact at or under the cap, and from the counters", async () => {
      await fc.assert(
        fc.asyncProperty(queries, fc.integer({ min: 0, max: 150 }), async ({ order: _order, limit: _limit, ...filters }, cap) => {
          const matching = expected(all, { ...filters, order: "newest", limit: 1 }).length;
          const counted = await store.countAllWorkItems(filters, cap);
          // A store smaller than the sample is read whole: its count is exact above the cap too.
          assert.deepEqual(counted, { count: matching, exact: true }, JSON.stringify({ filters, cap }));
        }),
        { numRuns: backend.name === "sqlite" ? 100 : 40 },
      );
    });

    test("company names: every company, and those of some ids", async () => {
      assert.deepEqual((await store.listCompanyNames()).map((company) => company.companyId), COMPANIES);
      assert.deepEqual([...(await store.companyNames([33, 31, 33, 999]))].sort(), [[31, "Company 31"], [33, "Company 33"]]);
      const many = await store.companyNames(Array.from({ length: 120 }, (_, i) => (i % 3) + 31));
      assert.equal(many.size, 3, "more ids than one statement asks for");
    });
  });
}
