/** The Deadlines chart's arithmetic (SPEC §14), without a store or a clock. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineOutlook } from "../../src/operators/deadline-outlook.ts";

const now = new Date("2026-11-25T09:00:00.000Z");
const inHours = (hours: number) => new Date(now.getTime() + hours * 3_600_000).toISOString();
const load = (hours: number, unsubmitted: number, companies = 1) => ({ deadlineAt: inHours(hours), unsubmitted, companies });

test("each deadline against the last hour's rate × the hours to go; overdue items have missed already", () => {
  const rows = deadlineOutlook({ overdue: 7, next: [load(2, 100, 3), load(26, 50)] }, 60, now);
  assert.deepEqual(rows, [
    { deadlineAt: null, unsubmitted: 7, companies: null, capacity: 0, canFile: 0, inTime: 0, beyond: 7 },
    { deadlineAt: inHours(2), unsubmitted: 100, companies: 3, capacity: 120, canFile: 120, inTime: 100, beyond: 0 },
    { deadlineAt: inHours(26), unsubmitted: 50, companies: 1, capacity: 1560, canFile: 1460, inTime: 50, beyond: 0 },
  ]);
});

test("earlier deadlines are filed first: what they take is not there for the later ones", () => {
  // 1,000 an hour: 500 due in 1 h all make it; of the 1,800 due in 2 h only the 1,500 left of 2,000 do.
  const [, first, second] = deadlineOutlook({ overdue: 0, next: [load(1, 500), load(2, 1800)] }, 1000, now);
  assert.deepEqual([first!.inTime, first!.beyond], [500, 0]);
  assert.deepEqual([second!.capacity, second!.canFile, second!.inTime, second!.beyond], [2000, 1500, 1500, 300]);
});

test("items that cannot make theirs go to the back, so they do not take the later deadlines' capacity", () => {
  const [, first, second] = deadlineOutlook({ overdue: 0, next: [load(1, 5000), load(3, 1000)] }, 600, now);
  assert.deepEqual([first!.canFile, first!.inTime, first!.beyond], [600, 600, 4400]);
  assert.deepEqual([second!.canFile, second!.inTime, second!.beyond], [1200, 1000, 0]);
});

test("no rate, no capacity; a deadline reached this instant has none either; the order is by deadline", () => {
  assert.deepEqual(deadlineOutlook({ overdue: 0, next: [load(5, 3)] }, 0, now).map((row) => row.beyond), [0, 3]);
  const rows = deadlineOutlook({ overdue: 0, next: [load(4, 10), load(0, 2)] }, 100, now);
  assert.deepEqual(rows.map((row) => [row.deadlineAt, row.canFile, row.beyond]), [[null, 0, 0], [inHours(0), 0, 2], [inHours(4), 400, 0]]);
});
