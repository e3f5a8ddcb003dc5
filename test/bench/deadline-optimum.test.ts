// The offline optimum of bench:deadlines: earliest deadline first in slots, skipping items past
// saving, with no capacity in the outage.
import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineOptimum, type OptimumJob } from "../../bench/lib/deadline-optimum.ts";

test("a hand-checked crunch: two servers, 100 ms jobs submitted 50 ms in, down from 300 to 400", () => {
  const jobs: OptimumJob[] = [
    { arrivedAt: 0, deadlineAt: 1000 }, // 0, 1: start at 0, the only ones there
    { arrivedAt: 0, deadlineAt: 1000 },
    { arrivedAt: 10, deadlineAt: 160 }, // 2, 3: the slot at 100 is their last (200 + 50 > 170)
    { arrivedAt: 10, deadlineAt: 170 },
    { arrivedAt: 20, deadlineAt: 120 }, // 4: its first slot is 100, and 150 > 120: lost whatever the order
    { arrivedAt: 150, deadlineAt: 390 }, // 5, 6, 7: only the slot at 200 fits (300 is down, 450 > 390),
    { arrivedAt: 150, deadlineAt: 360 }, //          which has two servers: 5, the latest deadline, is lost
    { arrivedAt: 150, deadlineAt: 380 },
    { arrivedAt: 310, deadlineAt: 460 }, // 8: arrives in the outage, starts at 400, submitted at 450
  ];
  const optimum = deadlineOptimum(jobs, { servers: 2, jobMs: 100, doneAfterMs: 50, originMs: 0, down: [{ from: 300, to: 400 }] });
  assert.deepEqual(optimum.onTime, [true, true, true, true, false, false, true, true, true]);
  assert.equal(optimum.count, 7);
});

test("capacity is what binds: without the outage the lost one of 5, 6, 7 fits at 300; with one server, half as many fit", () => {
  const jobs: OptimumJob[] = [
    { arrivedAt: 150, deadlineAt: 390 },
    { arrivedAt: 150, deadlineAt: 360 },
    { arrivedAt: 150, deadlineAt: 380 },
  ];
  assert.equal(deadlineOptimum(jobs, { servers: 2, jobMs: 100, doneAfterMs: 50, originMs: 0 }).count, 3);
  // One server: 200 and 300 fit (submitted by 250 and 350); 400 + 50 misses all three deadlines.
  assert.deepEqual(deadlineOptimum(jobs, { servers: 1, jobMs: 100, doneAfterMs: 50, originMs: 0 }).onTime, [false, true, true]);
});

test("an item arriving between slots waits for the next one; an empty list has no optimum to speak of", () => {
  // Slots from the first arrival (0): the second item arrives at 1 and can start at 100 only.
  const jobs: OptimumJob[] = [
    { arrivedAt: 0, deadlineAt: 100 },
    { arrivedAt: 1, deadlineAt: 140 },
    { arrivedAt: 1, deadlineAt: 150 },
  ];
  assert.deepEqual(deadlineOptimum(jobs, { servers: 5, jobMs: 100, doneAfterMs: 50 }).onTime, [true, false, true]);
  assert.deepEqual(deadlineOptimum([], { servers: 1, jobMs: 100, doneAfterMs: 100 }), { count: 0, onTime: [] });
  assert.throws(() => deadlineOptimum(jobs, { servers: 0, jobMs: 100, doneAfterMs: 50 }), /bad capacity/);
});
