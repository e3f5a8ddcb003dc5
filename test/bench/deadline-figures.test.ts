// The arithmetic behind bench:deadlines' utilisation and waits: intervals, a running sum read
// now and then, the crunch plan, and the figures of a tiny hand-made run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { planCrunch } from "../../bench/lib/crunch.ts";
import { crunchFigures, quantile } from "../../bench/lib/deadline-figures.ts";
import { coveredAtLeast, lengthOf, RunningSum, subtract, union } from "../../bench/lib/intervals.ts";

test("intervals: union, what is left outside a cut, and length", () => {
  assert.deepEqual(union([[5, 7], [0, 2], [1, 3], [3, 4], [8, 8]]), [[0, 4], [5, 7]]);
  assert.deepEqual(subtract([[0, 10], [12, 20]], [[2, 4], [9, 13], [15, Infinity]]), [[0, 2], [4, 9], [13, 15]]);
  assert.equal(lengthOf([[0, 10], [5, 12], [20, 21]]), 13);
  const three: Array<[number, number]> = [[0, 10], [2, 6], [4, 8], [8, 12]];
  assert.deepEqual(coveredAtLeast(three, 1), [[0, 12]]);
  assert.deepEqual(coveredAtLeast(three, 2), [[2, 10]], "[4, 8) ends where [8, 12) starts, and [0, 10) goes on");
  assert.deepEqual(coveredAtLeast(three, 3), [[4, 6]]);
  assert.deepEqual(coveredAtLeast(three, 4), []);
});

test("a running sum read now and then: straight lines between reads, flat outside them", () => {
  const sum = new RunningSum();
  sum.add(100, 0);
  sum.add(200, 800); // 8 in flight all along
  sum.add(300, 800); // idle
  sum.add(300, 900); // a read at the same time is ignored
  assert.equal(sum.valueAt(150), 400);
  assert.equal(sum.valueAt(50), 0);
  assert.equal(sum.valueAt(1000), 800);
  assert.equal(sum.growthOver([[100, 150], [250, 300]]), 400);
  assert.equal(sum.growthOver([[100, 200], [150, 250]]), 800, "overlapping stretches count once");
});

test("nearest-rank quantiles, with items never submitted as the longest waits", () => {
  const waits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, Infinity];
  assert.equal(quantile(waits, 0.5), 10);
  assert.equal(quantile(waits, 0.95), 19);
  assert.equal(quantile(waits, 1), Infinity);
});

test("the plan: same seed, same crunch; big companies send their share; arrivals before their deadline", () => {
  const shape = { companies: 100, bigEvery: 20, bigShare: 0.75, items: 4000, arrivalMs: 60_000, deadlines: 4, leadMs: 30_000, lastCallMs: 1000, seed: 7 };
  const plan = planCrunch(shape);
  assert.deepEqual(planCrunch(shape), plan);
  assert.deepEqual([...new Set(plan.filter((item) => item.big).map((item) => (item.companyId - 1) % 20))], [0]);
  const bigShare = plan.filter((item) => item.big).length / plan.length;
  assert.ok(bigShare > 0.72 && bigShare < 0.78, String(bigShare));
  for (const item of plan) assert.ok(item.atMs >= 0 && item.atMs <= item.deadlineMs - 1000, JSON.stringify(item));
  assert.deepEqual([...new Set(plan.map((item) => item.deadlineMs))].sort((a, b) => a - b), [15_000, 30_000, 45_000, 60_000]);
  // The surge: half of a deadline's items in the last quarter of its lead.
  const last = plan.filter((item) => item.deadlineMs === 60_000);
  const surge = last.filter((item) => item.atMs >= 60_000 - 1000 - 29_000 / 4).length / last.length;
  assert.ok(surge > 0.45 && surge < 0.55, String(surge));
});

test("figures of a hand-made run: on time, the optimum, small waits and utilisation", () => {
  const planned = (index: number, big: boolean) => ({ index, companyId: big ? 1 : 2 + index, big, atMs: 0, deadlineMs: 0 });
  const item = (index: number, big: boolean, arrivedAt: number, deadlineAt: number, submittedAt: number | null) => ({
    planned: planned(index, big),
    workItemId: index + 1,
    arrivedAt,
    deadlineAt,
    submittedAt,
    status: submittedAt === null ? "New" : "Successful",
  });
  const inFlight = new RunningSum();
  inFlight.add(0, 0);
  inFlight.add(1000, 500); // one call of two slots in flight half the time
  const figures = crunchFigures(
    {
      items: [item(0, true, 0, 300, 100), item(1, false, 0, 300, 700), item(2, false, 100, 1000, 300), item(3, false, 900, 950, null)],
      outage: [[500, 800]],
      inFlight,
      endedAt: 1000,
    },
    { servers: 2, callMs: 100, inFlight: 2 },
  );
  assert.equal(figures.onTime, 2);
  assert.equal(figures.late, 1);
  assert.equal(figures.notSubmitted, 1);
  // Two servers, 200 ms jobs from 0: items 0 and 1 at 0, item 2 at 200; item 3 arrives at 900 and its slot at 1000 is too late.
  assert.equal(figures.optimum, 3);
  assert.equal(figures.smallItems, 3);
  assert.equal(figures.smallOnTime, 1);
  assert.equal(figures.smallWaitP50, 700);
  assert.equal(figures.smallWaitP95, Infinity);
  // Due: [0, 700) and [900, 1000) (item 3 until the end); up outside [500, 800): 600 ms, with half of 2 slots in flight.
  assert.equal(figures.dueUpMs, 600);
  assert.equal(figures.utilisation, 0.25);
  // Two or more due (enough for both servers): items 0 and 1, then 1 and 2, over [0, 300).
  assert.equal(figures.backloggedMs, 300);
  assert.equal(figures.backloggedUtilisation, 0.25);
});

test("with the schedule counted in: the breaker's time after an outage can be left out of the backlogged utilisation", () => {
  const inFlight = new RunningSum();
  // Busy until the outage at 200, idle through it and the breaker's 300 ms after it, busy again from 700.
  inFlight.add(0, 0);
  inFlight.add(200, 200);
  inFlight.add(700, 200);
  inFlight.add(1000, 500);
  const run = {
    items: [{ planned: { index: 0, companyId: 1, big: false, atMs: 0, deadlineMs: 0 }, workItemId: 1, arrivedAt: 0, deadlineAt: 2000, submittedAt: 1000, status: "Successful" }],
    outage: [[200, 400]] as Array<[number, number]>,
    inFlight,
    endedAt: 1000,
  };
  const scheduled = crunchFigures(run, { servers: 1, callMs: 100, inFlight: 1 }, (at) => at, 300).scheduled!;
  assert.equal(scheduled.backloggedMs, 800);
  assert.equal(scheduled.backloggedUtilisation, 500 / 800);
  assert.equal(scheduled.afterBreakerMs, 500);
  assert.equal(scheduled.afterBreakerUtilisation, 1);
  assert.equal(crunchFigures(run, { servers: 1, callMs: 100, inFlight: 1 }, (at) => at).scheduled!.afterBreakerMs, 800, "no breaker time: nothing left out");
});
