/**
 * The scheduler's policies as pure functions (SPEC §14): the filing order, the shared capacity
 * and the breaker, without a database or a clock.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { admission, afterCall } from "../../src/scheduler/breaker.ts";
import { chooseSlot, mayHandOver, reserveSend, shareOf, type CapacityState, type SlotState } from "../../src/scheduler/capacity.ts";
import { compareLanes, fileOrder, NO_DEADLINE, tierOf, type Lane, type QueuedItem } from "../../src/scheduler/order.ts";

const NOW = "2026-11-25T10:00:00.000Z";
const NOON = "2026-11-25T11:00:00.000Z";
const TOMORROW = "2026-11-26T11:00:00.000Z";
const YESTERDAY = "2026-11-24T11:00:00.000Z";
const LAST_WEEK = "2026-11-18T11:00:00.000Z";
const item = (workItemId: number, companyId: number, deadlineAt: string | null): QueuedItem => ({ workItemId, companyId, deadlineAt, workType: "AuthorityRvdm" });
const ids = (items: QueuedItem[]) => items.map((i) => i.workItemId);

describe("filing order", () => {
  test("tiers: a deadline not passed is on time (at the instant itself too), a passed one late, none last", () => {
    assert.equal(tierOf(NOON, NOW), "onTime");
    assert.equal(tierOf(NOW, NOW), "onTime");
    assert.equal(tierOf(YESTERDAY, NOW), "late");
    assert.equal(tierOf(null, NOW), "none");
    assert.equal(tierOf(NO_DEADLINE, NOW), "none");
  });

  test("on-time items by earliest deadline, then late ones by earliest deadline, then items without one", () => {
    const items = [item(1, 1, null), item(2, 1, YESTERDAY), item(3, 1, TOMORROW), item(4, 1, LAST_WEEK), item(5, 1, NOON)];
    assert.deepEqual(ids(fileOrder(items, NOW)), [5, 3, 4, 2, 1]);
  });

  test("within a deadline companies take turns, least recently served first; within a company intake order", () => {
    const items = [item(1, 10, NOON), item(2, 10, NOON), item(3, 10, NOON), item(4, 20, NOON), item(5, 30, NOON), item(6, 30, NOON)];
    assert.deepEqual(ids(fileOrder(items, NOW)), [1, 4, 5, 2, 6, 3], "never served: company id breaks the tie");
    const served = new Map([[10, 50], [20, 40]]);
    assert.deepEqual(ids(fileOrder(items, NOW, served)), [5, 4, 1, 6, 2, 3], "30 never served, then 20, then 10");
  });

  test("a large company's batch does not hold back a small company's urgent item", () => {
    const big = Array.from({ length: 50 }, (_, i) => item(i + 1, 1, TOMORROW));
    const urgent = item(100, 2, NOON);
    assert.equal(fileOrder([...big, urgent], NOW)[0]!.workItemId, 100);
  });

  test("lanes compare by tier, deadline, turn and company", () => {
    const lane = (companyId: number, deadlineAt: string | null, servedSeq: number): Lane => ({ companyId, deadlineAt, servedSeq, workType: "AuthorityRvdm" });
    const lanes = [lane(1, YESTERDAY, 0), lane(2, null, 0), lane(3, NOON, 9), lane(4, NOON, 2), lane(5, TOMORROW, 0)];
    assert.deepEqual([...lanes].sort((a, b) => compareLanes(a, b, NOW)).map((l) => l.companyId), [4, 3, 5, 1, 2]);
  });
});

describe("shared capacity", () => {
  const slot = (n: number, kind: "submit" | "status", heldUntilMs: number, holder: string | null = "w#1"): SlotState => ({ slot: n, kind, heldUntilMs, holder });
  const state = (slots: SlotState[], waiting: Partial<CapacityState> = {}): CapacityState => ({ slots, submitsWaitingUntilMs: 0, pollsWaitingUntilMs: 0, ...waiting });

  test("the lowest free slot; none when all are held; a slot whose holder died is free after its time", () => {
    assert.equal(chooseSlot("submit", state([]), { maxConcurrency: 2 }, 1000), 1);
    assert.equal(chooseSlot("submit", state([slot(1, "submit", 5000)]), { maxConcurrency: 2 }, 1000), 2);
    assert.equal(chooseSlot("submit", state([slot(1, "submit", 5000), slot(2, "status", 5000)]), { maxConcurrency: 2 }, 1000), undefined);
    assert.equal(chooseSlot("submit", state([slot(1, "submit", 900), slot(2, "status", 5000)]), { maxConcurrency: 2 }, 1000), 1, "held until 900: free at 1000");
    assert.equal(chooseSlot("submit", state([slot(1, "submit", 5000, null)]), { maxConcurrency: 1 }, 1000), 1, "released");
  });

  test("polls take at most half while submits wait; submits all but one while polls wait; each keeps one slot", () => {
    const limits = { maxConcurrency: 4 };
    const twoPolls = [slot(1, "status", 5000), slot(2, "status", 5000)];
    assert.equal(shareOf("status", state([], { submitsWaitingUntilMs: 2000 }), limits, 1000), 2);
    assert.equal(chooseSlot("status", state(twoPolls, { submitsWaitingUntilMs: 2000 }), limits, 1000), undefined);
    assert.equal(chooseSlot("status", state(twoPolls), limits, 1000), 3, "no submit waits: polls may take it all");
    const threeSubmits = [slot(1, "submit", 5000), slot(2, "submit", 5000), slot(3, "submit", 5000)];
    assert.equal(chooseSlot("submit", state(threeSubmits, { pollsWaitingUntilMs: 2000 }), limits, 1000), undefined);
    assert.equal(chooseSlot("submit", state(threeSubmits, { pollsWaitingUntilMs: 900 }), limits, 1000), 4, "the mark ran out");
    assert.equal(shareOf("status", state([], { submitsWaitingUntilMs: 2000 }), { maxConcurrency: 1 }, 1000), 1);
    assert.equal(shareOf("submit", state([], { pollsWaitingUntilMs: 2000 }), { maxConcurrency: 1 }, 1000), 1);
  });

  test("a call that ends hands its slot to the next of its kind; while the other kind waits only submits do, and never with every slot", () => {
    const limits = { maxConcurrency: 4 };
    const submitsWait = { submitsWaitingUntilMs: 2000 };
    const pollsWait = { pollsWaitingUntilMs: 2000 };
    const mixed = [slot(1, "submit", 5000), slot(2, "submit", 5000), slot(3, "status", 5000)];
    assert.equal(mayHandOver("submit", state(mixed), limits, 1000), true);
    assert.equal(mayHandOver("status", state(mixed), limits, 1000), true, "no submit waits");
    assert.equal(mayHandOver("status", state(mixed, submitsWait), limits, 1000), false, "a waiting submit takes the poll's slot");
    assert.equal(mayHandOver("status", state(mixed, { submitsWaitingUntilMs: 900 }), limits, 1000), true, "the mark ran out");
    assert.equal(mayHandOver("submit", state(mixed, pollsWait), limits, 1000), true, "two submits of four slots");
    const fourSubmits = [...mixed.slice(0, 2), slot(3, "submit", 5000), slot(4, "submit", 5000)];
    assert.equal(mayHandOver("submit", state(fourSubmits), limits, 1000), true);
    assert.equal(mayHandOver("submit", state(fourSubmits, pollsWait), limits, 1000), false, "every slot a submit's: one goes back to the waiting polls");
    assert.equal(mayHandOver("submit", state([...fourSubmits.slice(0, 3), slot(4, "submit", 900)], pollsWait), limits, 1000), true, "a dead holder's slot is not counted");
    assert.equal(mayHandOver("submit", state([slot(1, "submit", 5000)], pollsWait), { maxConcurrency: 1 }, 1000), false, "with one slot, the polls get their turn");
    assert.equal(mayHandOver("submit", state([slot(1, "submit", 5000)]), { maxConcurrency: 1 }, 1000), true);
  });

  test("the rate limit spaces calls evenly: no second holds more than AUTHORITY_MAX_RPS", () => {
    let next = 0;
    const sends: number[] = [];
    for (let i = 0; i < 11; i++) {
      const reserved = reserveSend(next, 1000, 5);
      sends.push(reserved.sendAtMs);
      next = reserved.nextSendMs;
    }
    assert.deepEqual(sends.slice(0, 6), [1000, 1200, 1400, 1600, 1800, 2000]);
    for (let i = 5; i < sends.length; i++) assert.ok(sends[i]! - sends[i - 5]! >= 1000);
    assert.deepEqual(reserveSend(5000, 1000, 0), { sendAtMs: 1000, nextSendMs: 5000 }, "0: no limit");
    assert.deepEqual(reserveSend(0, 10_000, 5), { sendAtMs: 10_000, nextSendMs: 10_200 }, "idle time is not saved up");
  });
});

describe("breaker", () => {
  test("closed lets calls go; open keeps them back until its time, then one probe", () => {
    assert.equal(admission({ state: "closed", until: null }, 0), "go");
    assert.equal(admission({ state: "open", until: "2026-11-25T10:00:01.000Z" }, Date.parse(NOW)), "wait");
    assert.equal(admission({ state: "open", until: NOW }, Date.parse(NOW)), "probe");
    assert.equal(admission({ state: "halfOpen", until: "2026-11-25T10:00:01.000Z" }, Date.parse(NOW)), "wait");
  });

  test("N transient failures in a row open it; an answer resets the count; the probe closes or reopens it", () => {
    let failures = 0;
    const step = (result: "answered" | "transient", probe = false, state: "closed" | "halfOpen" = "closed") => {
      const next = afterCall({ failuresInARow: failures, probe, state, result }, 3);
      failures = next.failuresInARow;
      return next.change;
    };
    assert.deepEqual([step("transient"), step("transient"), step("answered"), step("transient"), step("transient"), step("transient")], ["none", "none", "none", "none", "none", "open"]);
    assert.equal(failures, 0);
    assert.equal(step("transient", true, "halfOpen"), "open");
    assert.equal(step("answered", true, "halfOpen"), "close");
  });
});
