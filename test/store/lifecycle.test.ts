/**
 * Store contract for the lifecycle methods (cancel, the filing queue's item claims and their
 * outcomes, status requests, the breaker and the authority's capacity, webhook outbox), run
 * against every backend on a real database.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { mayHandOver, type CapacityState } from "../../src/scheduler/capacity.ts";
import type { DueItem, SlotRequest, Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, queryRows, type Backend } from "../helpers/backends.ts";
import { addItems } from "../helpers/store-items.ts";
import { claimDueDeliveries, queueAll } from "../helpers/sweeps.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, seconds)).toISOString();

const idsOf = (items: ReadonlyArray<{ workItemId: number }>) => items.map((item) => item.workItemId);

/** One claim from the filing queue at second `now`, due by `dueBefore` (default `now`), held until second `lease`. */
const claim = (store: Store, owner: string, input: { now: number; dueBefore?: number; lease: number; limit?: number }): Promise<DueItem[]> =>
  store.claimFilingWork({ owner, now: at(input.now), dueBefore: at(input.dueBefore ?? input.now), leaseExpiresAt: at(input.lease), limit: input.limit ?? 9 });

/** Each test gets its own empty store, so one test's batches never show up in another's claims. */
async function withStore(backend: Backend, body: (store: Store) => Promise<void>): Promise<void> {
  const { store, cleanup } = await openFreshStore(backend);
  try {
    for (const companyId of [1, 2, 3, 4, 5, 6]) await store.createCompany({ companyId, name: `c${companyId}` });
    await body(store);
  } finally {
    await cleanup();
  }
}

for (const backend of await availableBackends()) {
  describe(`store lifecycle [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {

    test("cancelWorkItem: New in Open → Cancelled; otherwise conflict; foreign id not found", () => withStore(backend, async (store) => {
      const [a, b] = await addItems(store, 1, 2);
      const cancelled = await store.cancelWorkItem(1, a!.workItemId, at(1));
      assert.equal(cancelled.kind, "cancelled");
      assert.equal(cancelled.kind === "cancelled" && cancelled.item.status, "Cancelled");
      assert.equal(cancelled.kind === "cancelled" && cancelled.item.completedAt, at(1));
      const again = await store.cancelWorkItem(1, a!.workItemId, at(2));
      assert.equal(again.kind, "conflict");
      assert.equal((await store.cancelWorkItem(2, b!.workItemId, at(2))).kind, "notFound");
      assert.equal((await store.cancelWorkItem(1, 999_999, at(2))).kind, "notFound");
      await queueAll(store, at(3));
      const queued = await store.cancelWorkItem(1, b!.workItemId, at(4));
      assert.equal(queued.kind, "conflict");
      assert.equal(queued.kind === "conflict" && queued.batchStatus, "Processing", "the bot took the batch up");
      assert.equal((await store.getWorkItem(1, b!.workItemId))?.status, "New");
      assert.deepEqual((await store.getWorkBatch(1, a!.workBatchId))?.counts, { new: 1, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 1, withdrawn: 0 });
    }));

    test("listWorkItems by status follows items through every batch state, newest first, with a cursor", () => withStore(backend, async (store) => {
      const statusOf = async (status: string, beforeWorkItemId?: number) =>
        (await store.listWorkItems(3, { limit: 50, status: status as never, ...(beforeWorkItemId ? { beforeWorkItemId } : {}) })).map((i) => i.workItemId);
      const held = (id: number) => ({ companyId: 3, workItemId: id, owner: "w" });
      // Batch 1 is completed: one item Successful, one Failed. Batch 2 is Processing with one item
      // back to New for a retry and one Successful. Batch 3 is queued (Processing, nothing
      // claimed), batch 4 Open: all New.
      const first = await addItems(store, 3, 2);
      await queueAll(store, at(1));
      assert.deepEqual(idsOf(await claim(store, "w", { now: 2, lease: 60 })), idsOf(first));
      const result = { registrationNumber: "R-1", registeredAt: at(3) };
      const error = { code: "AUTHORITY_REJECTED" as const, message: "no", details: [] };
      assert.equal(await store.recordItemOutcome(held(first[0]!.workItemId), { kind: "succeeded", result }, { now: at(3) }), true);
      assert.equal(await store.recordItemOutcome(held(first[1]!.workItemId), { kind: "failed", error }, { now: at(3) }), true);
      assert.equal((await store.getWorkBatch(3, first[0]!.workBatchId))?.status, "Completed");
      const second = await addItems(store, 3, 2);
      await queueAll(store, at(5));
      assert.deepEqual(idsOf(await claim(store, "w", { now: 6, lease: 60 })), idsOf(second));
      assert.equal(await store.recordItemOutcome(held(second[0]!.workItemId), { kind: "retried", nextAttemptAt: at(30), lastError: "503" }, { now: at(7) }), true);
      assert.equal(await store.recordItemOutcome(held(second[1]!.workItemId), { kind: "succeeded", result }, { now: at(7) }), true);
      assert.equal((await store.getWorkBatch(3, second[0]!.workBatchId))?.status, "Processing");
      const third = await addItems(store, 3, 2);
      await queueAll(store, at(9));
      const fourth = await addItems(store, 3, 2);
      await addItems(store, 4, 1); // another company's New item never shows

      const newIds = [fourth[1], fourth[0], third[1], third[0], second[0]].map((k) => k!.workItemId);
      assert.deepEqual(await statusOf("New"), newIds);
      assert.deepEqual(await statusOf("New", newIds[2]), newIds.slice(3), "the cursor pages through New items across batches");
      assert.deepEqual(await statusOf("Successful"), [second[1]!.workItemId, first[0]!.workItemId]);
      assert.deepEqual(await statusOf("Successful", second[1]!.workItemId), [first[0]!.workItemId]);
      assert.deepEqual(await statusOf("Failed"), [first[1]!.workItemId]);
      assert.deepEqual(await statusOf("InProgress"), []);
      assert.deepEqual(await statusOf("Cancelled"), []);
      const cancelled = await store.cancelWorkItem(3, fourth[1]!.workItemId, at(10));
      assert.equal(cancelled.kind, "cancelled");
      assert.deepEqual(await statusOf("Cancelled"), [fourth[1]!.workItemId]);
      assert.deepEqual(await statusOf("New"), newIds.slice(1));
    }));

    test("item claims: held until their lease runs out, then taken over; the first owner's writes are refused; a retry waits for its backoff", () => withStore(backend, async (store) => {
      const keys = await addItems(store, 2, 3, "https://hooks.example/x");
      const ids = idsOf(keys);
      const batchId = keys[0]!.workBatchId;
      const held = (owner: string, id: number) => ({ companyId: 2, workItemId: id, owner });
      assert.deepEqual(await claim(store, "w0", { now: 9, lease: 39 }), [], "an Open batch's items are not in the queue yet");
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 2, toQueue: true }]);
      assert.equal(await queueAll(store, at(10)), 1);
      const queued = await store.getWorkBatch(2, batchId);
      assert.deepEqual([queued?.status, queued?.closedAt, queued?.completedAt], ["Processing", at(10), null]);
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 2, toQueue: false }], "nothing to take up, but its deadlines are still watched");

      const first = await claim(store, "w1", { now: 11, dueBefore: 10, lease: 40, limit: 2 });
      assert.deepEqual(idsOf(first), ids.slice(0, 2), "intake order");
      assert.deepEqual(first.map((i) => [i.companyId, i.workBatchId, i.attempts, i.deadlineAt, i.request.customerReference]), [
        [2, batchId, 0, null, "ORDER-1"],
        [2, batchId, 0, null, "ORDER-1"],
      ]);
      assert.equal((await store.getWorkItem(2, ids[0]!))?.status, "InProgress");
      assert.deepEqual(idsOf(await claim(store, "w2", { now: 20, lease: 50 })), [ids[2]], "held items are not claimed again");
      assert.deepEqual(await claim(store, "w3", { now: 39, lease: 69 }), [], "every item is held until its lease runs out");

      // w1 dies. Once its lease ran out, w3 takes its items over (w2's are still held), and
      // anything w1 would still write is refused.
      const takenOver = await claim(store, "w3", { now: 45, lease: 75 });
      assert.deepEqual(takenOver.map((i) => [i.workItemId, i.attempts]), [[ids[0], 0], [ids[1], 0]]);
      const result = { registrationNumber: "RVDM-1", registeredAt: at(46) };
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "succeeded", result }, { now: at(46) }), false);
      assert.equal(await store.releaseItems([held("w1", ids[0]!), held("w1", ids[1]!)], { now: at(46), dueAt: at(46), reason: "stopping" }), 0, "nor can it give them back");
      const untouched = await store.getWorkItem(2, ids[0]!);
      assert.deepEqual([untouched?.status, untouched?.result, untouched?.updatedAt], ["InProgress", null, at(45)], "the refused writes changed nothing");
      assert.equal(await store.recordItemOutcome({ companyId: 1, workItemId: ids[0]!, owner: "w3" }, { kind: "succeeded", result }, { now: at(46) }), false, "an id of another company");

      assert.equal(await store.recordItemOutcome(held("w3", ids[0]!), { kind: "succeeded", result }, { now: at(47) }), true);
      const error = { code: "AUTHORITY_REJECTED" as const, message: "no", details: [{ field: "senderChamberOfCommerceNo", message: "8 digits" }] };
      assert.equal(await store.recordItemOutcome(held("w3", ids[1]!), { kind: "failed", error }, { now: at(47) }), true);
      // w2's lease ran out at 50, but nobody took its item over: its claim still holds.
      assert.equal(await store.recordItemOutcome(held("w2", ids[2]!), { kind: "retried", nextAttemptAt: at(90), lastError: "503" }, { now: at(52) }), true);
      assert.equal(await store.recordItemOutcome(held("w3", ids[0]!), { kind: "succeeded", result }, { now: at(48) }), false, "the claim ended with its outcome");
      assert.equal(await store.recordItemOutcome(held("w2", ids[2]!), { kind: "retried", nextAttemptAt: at(90), lastError: "503" }, { now: at(53) }), false, "so did this one");

      const succeeded = await store.getWorkItem(2, ids[0]!);
      assert.deepEqual([succeeded?.status, succeeded?.result, succeeded?.completedAt], ["Successful", result, at(47)]);
      const failed = await store.getWorkItem(2, ids[1]!);
      assert.deepEqual([failed?.status, failed?.error, failed?.attempts], ["Failed", error, 0]);
      const retried = await store.getWorkItem(2, ids[2]!);
      assert.deepEqual([retried?.status, retried?.attempts, retried?.completedAt], ["New", 1, null]);
      assert.equal((await store.getWorkBatch(2, batchId))?.status, "Processing", "one item still to finish");

      // Back in the queue, but not before its backoff is over.
      assert.deepEqual(await claim(store, "w4", { now: 89, lease: 120 }), []);
      const due = await claim(store, "w4", { now: 90, lease: 120 });
      assert.deepEqual(due.map((i) => [i.workItemId, i.attempts]), [[ids[2], 1]]);
      const unavailable = { code: "AUTHORITY_UNAVAILABLE" as const, message: "down", details: [] };
      assert.equal(await store.recordItemOutcome(held("w4", ids[2]!), { kind: "failed", error: unavailable, transient: true, lastError: "503" }, { now: at(92) }), true);
      assert.equal((await store.getWorkItem(2, ids[2]!))?.attempts, 2);
      const batch = await store.getWorkBatch(2, batchId);
      assert.deepEqual([batch?.status, batch?.completedAt, batch?.counts], ["Completed", at(92), { new: 0, inProgress: 0, submitted: 0, successful: 1, failed: 2, cancelled: 0, withdrawn: 0 }], "it completes with its last item");
      assert.deepEqual(await store.companiesWithBotWork(), []);
      assert.deepEqual(await claim(store, "w5", { now: 1000, lease: 1100 }), [], "nothing left in the queue");

      // Each terminal item with a webhook URL left exactly one outbox row; the retry left none.
      const deliveries = await claimDueDeliveries(store, { owner: "d1", now: at(100), leaseExpiresAt: at(160), limit: 50 });
      assert.deepEqual(deliveries.map((d) => [d.workItemId, d.eventType]).sort(), [
        [ids[0], "workitem.succeeded"],
        [ids[1], "workitem.failed"],
        [ids[2], "workitem.failed"],
      ].sort());
      assert.ok(deliveries.every((d) => /^msg_[0-9a-f]{32}$/.test(d.eventId) && d.url === "https://hooks.example/x" && d.attempts === 0));
    }));

    test("releaseItems: a call not made puts its item back due at once, in its place, without spending an attempt", () => withStore(backend, async (store) => {
      const ids = idsOf(await addItems(store, 1, 3));
      const held = (owner: string) => ({ companyId: 1, workItemId: ids[0]!, owner });
      await queueAll(store, at(1));
      assert.deepEqual(idsOf(await claim(store, "w1", { now: 2, lease: 60, limit: 1 })), [ids[0]]);
      assert.equal(await store.recordItemOutcome(held("w1"), { kind: "retried", nextAttemptAt: at(10), lastError: "503" }, { now: at(3) }), true);
      assert.deepEqual(idsOf(await claim(store, "w1", { now: 4, lease: 60, limit: 1 })), [ids[1]], "in backoff, the first item gives way");
      const [again] = await claim(store, "w1", { now: 10, lease: 60, limit: 1 });
      assert.deepEqual([again?.workItemId, again?.attempts], [ids[0], 1], "its backoff over, it is back at its place, before later items");

      assert.equal(await store.releaseItems([held("w2")], { now: at(11), dueAt: at(11), reason: "the authority's circuit breaker is open" }), 0, "only its holder gives it back");
      assert.equal(await store.releaseItems([], { now: at(11), dueAt: at(11), reason: "nothing" }), 0);
      assert.equal(await store.releaseItems([held("w1")], { now: at(12), dueAt: at(12), reason: "the authority's circuit breaker is open" }), 1);
      const released = await store.getWorkItem(1, ids[0]!);
      assert.deepEqual([released?.status, released?.attempts, released?.updatedAt, released?.completedAt], ["New", 1, at(12), null]);
      assert.equal(await store.recordItemOutcome(held("w1"), { kind: "retried", nextAttemptAt: at(99), lastError: "late" }, { now: at(13) }), false, "a released claim is over");

      const [retaken] = await claim(store, "w3", { now: 12, lease: 60, limit: 1 });
      assert.deepEqual([retaken?.workItemId, retaken?.attempts], [ids[0], 1], "due at once, ahead of the item still waiting");
      assert.equal(await store.releaseItems([held("w1")], { now: at(13), dueAt: at(13), reason: "stopping" }), 0, "w3 holds it now");
      const { timeline } = (await store.getWorkItemTimeline(ids[0]!))!;
      assert.ok(timeline.some((e) => e.kind === "status" && e.status === "New" && /the authority's circuit breaker is open/.test(e.detail ?? "")), "the timeline says why it was not filed");
    }));

    test("releaseItems: a given-back item keeps its company's turn, and is due again for the pass that claimed it", () => withStore(backend, async (store) => {
      const deadline = at(3600);
      const [a1, a2] = idsOf(await addItems(store, 1, 2, null, [deadline, deadline]));
      const [b1, b2] = idsOf(await addItems(store, 2, 2, null, [deadline, deadline]));
      await queueAll(store, at(1));
      const give = (items: DueItem[], now: number, dueAt: number) =>
        store.releaseItems(items.map((item) => ({ companyId: item.companyId, workItemId: item.workItemId, owner: "w1", turn: item.turn })), { now: at(now), dueAt: at(dueAt), reason: "the authority's circuit breaker is open" });

      // The pass began at 2: the breaker keeps the call back at 3, and the probe's answer lets it go on at 4.
      const first = await claim(store, "w1", { now: 2, lease: 60, limit: 1 });
      assert.deepEqual(idsOf(first), [a1]);
      assert.ok(first[0]!.turn.after > first[0]!.turn.before, "the claim moved company 1 to the back");
      assert.equal(await give(first, 3, 2), 1);
      assert.deepEqual(idsOf(await claim(store, "w1", { now: 4, dueBefore: 2, lease: 60, limit: 4 })), [a1, b1, a2, b2], "company 1 first again, its item first in it");

      // Once the leases are over: company 1 (served before company 2 at 4) first, then company 2,
      // whose claim also takes company 1's next item, so company 1 was served again since.
      const [a] = await claim(store, "w2", { now: 70, lease: 120, limit: 1 });
      assert.deepEqual(idsOf(await claim(store, "w3", { now: 71, lease: 120, limit: 2 })), [b1, a2]);
      assert.equal(a?.workItemId, a1);
      await store.releaseItems([{ companyId: 1, workItemId: a1!, owner: "w2", turn: a!.turn }], { now: at(72), dueAt: at(70), reason: "stopping" });
      assert.deepEqual(idsOf(await claim(store, "w4", { now: 73, lease: 120, limit: 2 })), [b2, a1], "the later claim's turn stands: company 2 before company 1");
    }));

    test("two stages: on-time deadlines first, earliest first, then late ones; Submitted until decided; workitem.submitted on the first pending answer only", () => withStore(backend, async (store) => {
      const keys = await addItems(store, 4, 4, "https://hooks.example/x", [at(300), at(100), at(200), at(50)]);
      const ids = idsOf(keys);
      const held = (owner: string, id: number) => ({ companyId: 4, workItemId: id, owner });
      await queueAll(store, at(1));
      const due = await claim(store, "w1", { now: 60, lease: 600 });
      assert.deepEqual(idsOf(due), [ids[1], ids[2], ids[0], ids[3]], "on time by earliest deadline; the late item last");
      assert.deepEqual(due.map((i) => i.deadlineAt), [at(100), at(200), at(300), at(50)]);

      for (const [index, id] of ids.entries()) {
        const submitted = { kind: "submitted" as const, applicationNumber: `RVDM-A-${index}`, submittedAt: at(61), nextPollAt: at(61) };
        assert.equal(await store.recordItemOutcome(held("w1", id), submitted, { now: at(61) }), true);
      }
      const view = await store.getWorkItem(4, ids[0]!);
      assert.deepEqual([view?.status, view?.authority], ["Submitted", { applicationNumber: "RVDM-A-0", registrationNumber: null, submittedAt: at(61), decidedAt: null }]);
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "pending", nextPollAt: at(70), lastError: null }, { now: at(61) }), false, "a status request needs its own claim");

      const polls = (owner: string, dueBefore: number, limit = 9) => store.claimStatusRequests({ owner, dueBefore: at(dueBefore), leaseExpiresAt: at(dueBefore + 100), limit });
      const toPoll = await polls("w1", 62, 3);
      assert.deepEqual(toPoll.map((i) => [i.workItemId, i.applicationNumber, i.polls, i.companyId, i.workBatchId]), [0, 1, 2].map((n) => [ids[n], `RVDM-A-${n}`, 0, 4, keys[0]!.workBatchId]));
      assert.deepEqual((await polls("w2", 62)).map((i) => i.workItemId), [ids[3]], "items held for a status request are not claimed again");

      // Item 0: pending twice, then registered. Item 1: rejected. Item 2: stays pending. Item 3: registered at the first question.
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "pending", nextPollAt: at(70), lastError: null }, { now: at(63) }), true);
      assert.deepEqual(await polls("w1", 69), [], "not due before its next poll");
      assert.deepEqual((await polls("w1", 70)).map((i) => [i.workItemId, i.polls]), [[ids[0], 1]]);
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "pending", nextPollAt: at(80), lastError: "AuthorityUnavailableError: 503" }, { now: at(71) }), true);
      assert.deepEqual((await polls("w1", 80)).map((i) => [i.workItemId, i.polls]), [[ids[0], 2]]);
      const result = { registrationNumber: "RVDM-2026-X", registeredAt: at(81) };
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "succeeded", result }, { now: at(81) }), true);
      const rejected = { code: "AUTHORITY_REJECTED" as const, message: "no", details: [{ field: "exportDate", message: "in the past" }] };
      assert.equal(await store.recordItemOutcome(held("w1", ids[1]!), { kind: "failed", decided: true, error: rejected }, { now: at(64) }), true);
      assert.equal(await store.recordItemOutcome(held("w1", ids[2]!), { kind: "pending", nextPollAt: at(140), lastError: null }, { now: at(64) }), true);
      assert.equal(await store.recordItemOutcome(held("w2", ids[3]!), { kind: "succeeded", result }, { now: at(65) }), true);

      const registered = await store.getWorkItem(4, ids[0]!);
      assert.deepEqual([registered?.status, registered?.result, registered?.authority], ["Successful", result, { applicationNumber: "RVDM-A-0", registrationNumber: "RVDM-2026-X", submittedAt: at(61), decidedAt: at(81) }]);
      const failed = await store.getWorkItem(4, ids[1]!);
      assert.deepEqual([failed?.status, failed?.authority.applicationNumber, failed?.authority.decidedAt, failed?.attempts], ["Failed", "RVDM-A-1", at(64), 0]);

      const batch = await store.getWorkBatch(4, keys[0]!.workBatchId);
      assert.deepEqual([batch?.status, batch?.counts.submitted], ["Processing", 1], "an item still Submitted keeps the batch unfinished");
      assert.deepEqual(await polls("w2", 139), [], "nothing due until its next poll");
      assert.deepEqual((await polls("w2", 140)).map((i) => i.workItemId), [ids[2]]);
      assert.equal(await store.recordItemOutcome(held("w2", ids[2]!), { kind: "succeeded", result }, { now: at(141) }), true);
      const completed = await store.getWorkBatch(4, keys[0]!.workBatchId);
      assert.deepEqual([completed?.status, completed?.completedAt], ["Completed", at(141)]);

      const events = await claimDueDeliveries(store, { owner: "d", now: at(150), leaseExpiresAt: at(199), limit: 20 });
      const byItem = (id: number) => events.filter((e) => e.workItemId === id).map((e) => e.eventType).sort();
      assert.deepEqual(byItem(ids[0]!), ["workitem.submitted", "workitem.succeeded"], "one submitted event, however many pending answers");
      assert.deepEqual(byItem(ids[1]!), ["workitem.failed"], "decided at the first question: no submitted event");
      assert.deepEqual(byItem(ids[2]!), ["workitem.submitted", "workitem.succeeded"]);
      assert.deepEqual(byItem(ids[3]!), ["workitem.succeeded"]);
    }));

    test("status requests: the longest waiting first, held until answered or the lease runs out; a released one keeps its polls", () => withStore(backend, async (store) => {
      const ids = idsOf(await addItems(store, 5, 4));
      const held = (owner: string, id: number) => ({ companyId: 5, workItemId: id, owner });
      await queueAll(store, at(1));
      await claim(store, "w1", { now: 2, lease: 60 });
      const nextPolls = [at(12), at(11), at(11), at(12)];
      for (const [index, id] of ids.entries()) {
        assert.equal(await store.recordItemOutcome(held("w1", id), { kind: "submitted", applicationNumber: `A-${index}`, submittedAt: at(3), nextPollAt: nextPolls[index]! }, { now: at(3) }), true);
      }
      const polls = (owner: string, dueBefore: number, lease: number, limit = 9) => store.claimStatusRequests({ owner, dueBefore: at(dueBefore), leaseExpiresAt: at(lease), limit });
      assert.deepEqual((await polls("w1", 12, 40, 2)).map((i) => i.workItemId), [ids[1], ids[2]], "the two waiting longest, not the lowest ids");
      assert.deepEqual(await polls("w1", 11, 40), [], "the others are not due yet");
      assert.deepEqual((await polls("w1", 12, 40)).map((i) => i.workItemId), [ids[0], ids[3]]);

      // w1 answers for three, and dies holding item 3; once its lease ran out, w2 asks about it.
      assert.equal(await store.recordItemOutcome(held("w1", ids[0]!), { kind: "pending", nextPollAt: at(100), lastError: null }, { now: at(13) }), true);
      assert.equal(await store.recordItemOutcome(held("w1", ids[1]!), { kind: "pending", nextPollAt: at(100), lastError: null }, { now: at(13) }), true);
      assert.equal(await store.recordItemOutcome(held("w1", ids[2]!), { kind: "pending", nextPollAt: at(100), lastError: null }, { now: at(13) }), true);
      assert.deepEqual(await polls("w2", 39, 80), [], "held until its lease runs out");
      const [takenOver] = await polls("w2", 40, 80);
      assert.deepEqual([takenOver?.workItemId, takenOver?.polls], [ids[3], 0]);
      const result = { registrationNumber: "R-3", registeredAt: at(41) };
      assert.equal(await store.recordItemOutcome(held("w1", ids[3]!), { kind: "succeeded", result }, { now: at(41) }), false, "the first owner's answer is refused");
      assert.equal((await store.getWorkItem(5, ids[3]!))?.status, "Submitted");

      // w2 gives it back without asking (the breaker opened): due at once, polls unchanged.
      assert.equal(await store.releaseItems([held("w2", ids[3]!)], { now: at(42), dueAt: at(42), reason: "the authority's circuit breaker is open" }), 1);
      const released = await store.getWorkItem(5, ids[3]!);
      assert.deepEqual([released?.status, released?.authority.applicationNumber], ["Submitted", "A-3"]);
      assert.equal(await store.recordItemOutcome(held("w2", ids[3]!), { kind: "succeeded", result }, { now: at(43) }), false, "a released claim is over");
      const [again] = await polls("w3", 42, 90);
      assert.deepEqual([again?.workItemId, again?.polls], [ids[3], 0]);
      assert.equal(await store.recordItemOutcome(held("w3", ids[3]!), { kind: "pending", nextPollAt: at(100), lastError: null }, { now: at(43) }), true);
      assert.deepEqual((await polls("w3", 100, 200)).map((i) => [i.workItemId, i.polls]), ids.map((id) => [id, 1]));
      const events = await store.listEvents(5, { afterPosition: 0, limit: 50 });
      assert.deepEqual(events.map((e) => e.type), ids.map(() => "workitem.submitted"), "one submitted event each, take-over and release included");
    }));

    test("flagDeadlinesAtRisk flags each New or InProgress item once, only in its company and only when its deadline is near", () => withStore(backend, async (store) => {
      const mine = await addItems(store, 5, 3, "https://hooks.example/x", [at(100), at(500), at(50)]);
      const theirs = await addItems(store, 6, 1, "https://hooks.example/y", [at(100)]);
      assert.equal(await store.flagDeadlinesAtRisk(5, { riskBefore: at(100), now: at(1) }), 2);
      assert.equal(await store.flagDeadlinesAtRisk(5, { riskBefore: at(200), now: at(2) }), 0, "once");
      assert.equal(await store.flagDeadlinesAtRisk(5, { riskBefore: at(500), now: at(3) }), 1);
      const events = await claimDueDeliveries(store, { owner: "d", now: at(10), leaseExpiresAt: at(99), limit: 20 });
      assert.deepEqual(events.map((e) => [e.workItemId, e.eventType]).sort(), mine.map((k) => [k.workItemId, "workitem.deadline_at_risk"]).sort());
      assert.ok(!events.some((e) => e.workItemId === theirs[0]!.workItemId), "another company's item is its own sweep's business");
    }));

    test("the authority breaker: closed until opened, one probe claim wins, and closing resets it", () => withStore(backend, async (store) => {
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "closed", until: null, reason: null });
      await store.openAuthorityBreaker("sim", { until: at(60), now: at(0) });
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "open", until: at(60), reason: null });
      assert.deepEqual(await store.getAuthorityBreaker("other"), { state: "closed", until: null, reason: null }, "one breaker per authority");
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "a", until: at(70), now: at(59) }), false, "not before it is due");
      const claims = await Promise.all(["a", "b", "c"].map((owner) => store.claimAuthorityBreakerProbe("sim", { owner, until: at(70), now: at(60) })));
      assert.deepEqual(claims.filter(Boolean).length, 1, "one probe");
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "halfOpen", until: at(70), reason: null });
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "b", until: at(80), now: at(71) }), true, "a probe whose turn ran out is given to another");
      await store.closeAuthorityBreaker("sim", at(72));
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "closed", until: null, reason: null });
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "a", until: at(90), now: at(73) }), false, "no probe while closed");
    }));

    test("authority slots: at most maxConcurrency calls over every caller, held until released or their time is up; none while the breaker is open, but its probe", () => withStore(backend, async (store) => {
      const t0 = Date.parse(at(0));
      const request = (holder: string, ms: number, extra: Partial<SlotRequest> = {}): SlotRequest =>
        ({ holder, kind: "submit", nowMs: t0 + ms, probe: false, maxConcurrency: 2, maxRps: 0, holdMs: 10_000, ...extra });
      const ask = (holder: string, ms: number, extra: Partial<SlotRequest> = {}) => store.takeAuthoritySlot("sim", request(holder, ms, extra));
      assert.deepEqual(await ask("a", 0), { kind: "granted", slot: 1, sendAtMs: t0 });
      assert.deepEqual(await ask("b", 1, { kind: "status" }), { kind: "granted", slot: 2, sendAtMs: t0 + 1 });
      assert.deepEqual(await ask("c", 2), { kind: "wait" }, "submits and status requests count alike");
      assert.deepEqual(await store.takeAuthoritySlot("other", request("x", 2)), { kind: "granted", slot: 1, sendAtMs: t0 + 2 }, "each authority has its own");
      await store.releaseAuthoritySlot("sim", 1, "c");
      assert.deepEqual(await ask("c", 3), { kind: "wait" }, "only its holder frees a slot");
      await store.releaseAuthoritySlot("sim", 1, "a");
      assert.deepEqual(await ask("c", 4), { kind: "granted", slot: 1, sendAtMs: t0 + 4 });
      // b died holding slot 2: it is held until b's send time and holdMs.
      assert.deepEqual(await ask("d", 10_000), { kind: "wait" });
      assert.deepEqual(await ask("d", 10_001), { kind: "granted", slot: 2, sendAtMs: t0 + 10_001 });

      // A submit kept waiting is remembered for every caller: the next free slot is not a poll's.
      const shared = (holder: string, kind: "submit" | "status", ms: number) => store.takeAuthoritySlot("shared", request(holder, ms, { kind }));
      assert.equal((await shared("p1", "status", 0)).kind, "granted");
      assert.equal((await shared("p2", "status", 0)).kind, "granted", "no submit waits: polls may take every slot");
      assert.deepEqual(await shared("s1", "submit", 1), { kind: "wait" });
      await store.releaseAuthoritySlot("shared", 1, "p1");
      assert.deepEqual(await shared("p3", "status", 2), { kind: "wait" }, "polls keep to half while a submit waits");
      assert.deepEqual(await shared("s1", "submit", 3), { kind: "granted", slot: 1, sendAtMs: t0 + 3 });

      // The rate limit spaces the calls of every caller: 5 a second, one each 200 ms.
      const paced = [];
      for (const holder of ["r1", "r2", "r3"]) {
        const grant = await store.takeAuthoritySlot("paced", request(holder, 0, { maxConcurrency: 3, maxRps: 5 }));
        paced.push(grant.kind === "granted" ? grant.sendAtMs - t0 : grant.kind);
      }
      assert.deepEqual(paced, [0, 200, 400]);

      await store.openAuthorityBreaker("sim", { until: at(60), now: at(20) });
      await store.releaseAuthoritySlot("sim", 1, "c");
      assert.deepEqual(await ask("e", 20_000), { kind: "breakerOpen" }, "a free slot, but the breaker is open");
      assert.deepEqual(await ask("probe", 60_000, { probe: true }), { kind: "granted", slot: 1, sendAtMs: t0 + 60_000 });
      assert.deepEqual(await ask("f", 60_001), { kind: "breakerOpen" }, "only the probe");
      await store.closeAuthorityBreaker("sim", at(61));
      assert.deepEqual(await ask("f", 61_000), { kind: "granted", slot: 2, sendAtMs: t0 + 61_000 });
    }));

    test("a slot handed over to the next call of its kind: only by its holder, not about to run out, with the breaker closed, and as mayHandOver allows", () => withStore(backend, async (store) => {
      const t0 = Date.parse(at(0));
      const request = (holder: string, ms: number, extra: Partial<SlotRequest> = {}): SlotRequest =>
        ({ holder, kind: "submit", nowMs: t0 + ms, probe: false, maxConcurrency: 2, maxRps: 0, holdMs: 10_000, ...extra });
      const ask = (holder: string, ms: number, extra: Partial<SlotRequest> = {}) => store.takeAuthoritySlot("sim", request(holder, ms, extra));
      const hand = (slot: number, from: string, to: string, ms: number, kind: "submit" | "status" = "submit") =>
        store.handOverAuthoritySlot("sim", { slot, from, to, kind, nowMs: t0 + ms, holdMs: 10_000, marginMs: 1000, maxConcurrency: 2 });

      assert.deepEqual(await ask("a", 0), { kind: "granted", slot: 1, sendAtMs: t0 });
      assert.equal(await hand(1, "a", "b", 1), true);
      await store.releaseAuthoritySlot("sim", 1, "a");
      assert.deepEqual(await ask("c", 2), { kind: "granted", slot: 2, sendAtMs: t0 + 2 }, "b holds slot 1 now: a's release changed nothing");
      assert.deepEqual(await ask("d", 3, { kind: "status" }), { kind: "wait" });
      assert.equal(await hand(1, "a", "e", 4), false, "only the holder hands a slot on");
      assert.equal(await hand(1, "b", "e", 4, "status"), false, "to the next call of the same kind");
      assert.equal(await hand(2, "c", "e", 5), false, "a poll waits and submits hold every slot: one goes back");
      await store.releaseAuthoritySlot("sim", 2, "c");
      assert.equal(await hand(1, "b", "e", 6), true, "one submit of two slots");
      assert.deepEqual(await ask("d", 7, { kind: "status" }), { kind: "granted", slot: 2, sendAtMs: t0 + 7 });
      assert.deepEqual(await ask("f", 8), { kind: "wait" }, "a submit waits now");
      assert.equal(await hand(2, "d", "g", 9, "status"), false, "a poll does not hand on while a submit waits");
      assert.equal(await hand(2, "d", "g", 9 + 1000, "status"), true, "the submit's mark ran out");
      assert.equal(await hand(1, "e", "h", 6 + 10_000 - 1000), false, "e's hold is about to run out: another process may take the slot as free");

      await store.openAuthorityBreaker("sim", { until: at(60), now: at(1) });
      assert.equal(await hand(2, "g", "i", 1100, "status"), false, "no call leaves while the breaker is open");
      await store.closeAuthorityBreaker("sim", at(1));
      assert.equal(await hand(2, "g", "i", 1200, "status"), true);
      assert.equal(await store.handOverAuthoritySlot("other", { slot: 2, from: "i", to: "j", kind: "status", nowMs: t0 + 1300, holdMs: 10_000, marginMs: 1000, maxConcurrency: 2 }), false, "each authority has its own");
    }));

    test("handOverAuthoritySlot decides as mayHandOver on generated states", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        let seed = 7;
        const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
        const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
        const t0 = Date.parse(at(0));
        const limits = { maxConcurrency: 3 };
        let nowMs = t0;
        let calls = 0;
        let decided = 0;
        for (let step = 0; step < 200; step++) {
          nowMs += pick([1, 5, 50, 400, 1200]);
          const kind = pick(["submit", "status"] as const);
          const holder = `h${++calls}`;
          const grant = await store.takeAuthoritySlot("gen", { holder, kind, nowMs, probe: false, maxConcurrency: 3, maxRps: 0, holdMs: pick([1500, 10_000]) });
          const slots = await queryRows<{ slot: number | string; holder: string | null; kind: "submit" | "status" | null; held_until_ms: number | string }>(
            location, "SELECT slot, holder, kind, held_until_ms FROM authority_slots WHERE authority = 'gen' ORDER BY slot");
          const held = slots.filter((slot) => slot.holder !== null && Number(slot.held_until_ms) > nowMs + 1000);
          if (held.length === 0 || grant.kind === "breakerOpen") continue;
          const [capacity] = await queryRows<{ submits_waiting_until_ms: number | string; polls_waiting_until_ms: number | string }>(
            location, "SELECT submits_waiting_until_ms, polls_waiting_until_ms FROM authority_capacity WHERE authority = 'gen'");
          const state: CapacityState = {
            slots: slots.map((slot) => ({ slot: Number(slot.slot), holder: slot.holder, kind: slot.kind, heldUntilMs: Number(slot.held_until_ms) })),
            submitsWaitingUntilMs: Number(capacity!.submits_waiting_until_ms),
            pollsWaitingUntilMs: Number(capacity!.polls_waiting_until_ms),
          };
          const from = pick(held);
          const to = `h${++calls}`;
          const handed = await store.handOverAuthoritySlot("gen", { slot: Number(from.slot), from: from.holder!, to, kind: from.kind!, nowMs, holdMs: 10_000, marginMs: 1000, maxConcurrency: 3 });
          assert.equal(handed, mayHandOver(from.kind!, state, limits, nowMs), `step ${step}: ${JSON.stringify({ nowMs: nowMs - t0, from, state })}`);
          if (handed) decided += 1;
          // Some calls end: their slots go back.
          for (const slot of held) if (random() < 0.3) await store.releaseAuthoritySlot("gen", Number(slot.slot), slot.holder === from.holder && handed ? to : slot.holder!);
        }
        assert.ok(decided > 20, `both answers came up (${decided} handed over)`);
      } finally {
        await cleanup();
      }
    });

    test("a batch whose items are all cancelled is taken up and completes at once", () => withStore(backend, async (store) => {
      const [only] = await addItems(store, 3, 1);
      await store.cancelWorkItem(3, only!.workItemId, at(200));
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 3, toQueue: true }]);
      assert.equal(await queueAll(store, at(201)), 1);
      const batch = await store.getWorkBatch(3, only!.workBatchId);
      assert.deepEqual([batch?.status, batch?.closedAt, batch?.completedAt], ["Completed", at(201), at(201)]);
      assert.deepEqual(batch?.counts, { new: 0, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 1, withdrawn: 0 });
      assert.deepEqual(await claim(store, "w", { now: 202, lease: 260 }), []);
      assert.deepEqual(await store.companiesWithBotWork(), []);
    }));

    test("queueBatches takes each company's Open batch up once; a new item then opens a new batch", () => withStore(backend, async (store) => {
      const [firstKey] = await addItems(store, 4, 1);
      await addItems(store, 5, 2);
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 4, toQueue: true }, { companyId: 5, toQueue: true }]);
      assert.equal(await store.queueBatches(4, at(300)), 1);
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 4, toQueue: false }, { companyId: 5, toQueue: true }], "one company at a time");
      assert.equal(await queueAll(store, at(301)), 1);
      assert.equal(await queueAll(store, at(302)), 0);
      assert.equal(await store.queueBatches(4, at(303)), 0);
      const first = await store.getWorkBatch(4, firstKey!.workBatchId);
      assert.deepEqual([first?.status, first?.closedAt], ["Processing", at(300)]);
      const [secondKey] = await addItems(store, 4, 1);
      assert.notEqual(secondKey!.workBatchId, firstKey!.workBatchId);
      assert.equal((await store.getWorkBatch(4, secondKey!.workBatchId))?.status, "Open");
      // The queued items are due from when their batch was taken up.
      assert.deepEqual(await claim(store, "w", { now: 300, dueBefore: 299, lease: 400 }), []);
      assert.deepEqual(idsOf(await claim(store, "w", { now: 300, lease: 400 })), [firstKey!.workItemId]);
    }));

    test("webhook outbox: claims are leased, attempts recorded, only the owner may record", () => withStore(backend, async (store) => {
      const [key] = await addItems(store, 5, 1, "https://hooks.example/5");
      await queueAll(store, at(400));
      assert.deepEqual(idsOf(await claim(store, "w", { now: 401, lease: 460 })), [key!.workItemId]);
      assert.equal(await store.countPendingWebhookDeliveries(), 0);
      const succeeded = { kind: "succeeded" as const, result: { registrationNumber: "R", registeredAt: at(401) } };
      assert.equal(await store.recordItemOutcome({ companyId: 5, workItemId: key!.workItemId, owner: "w" }, succeeded, { now: at(402) }), true);
      assert.equal(await store.countPendingWebhookDeliveries(), 1, "the outcome and its outbox row committed together");

      const [delivery] = await claimDueDeliveries(store, { owner: "d1", now: at(403), leaseExpiresAt: at(463), limit: 10 });
      assert.ok(delivery);
      assert.equal(delivery.createdAt, at(402));
      assert.deepEqual(await claimDueDeliveries(store, { owner: "d2", now: at(404), leaseExpiresAt: at(464), limit: 10 }), [], "leased rows are not claimable");
      const retry = { kind: "retried" as const, nextAttemptAt: at(500), error: "the receiver answered 500", httpStatus: 500 };
      assert.equal(await store.recordWebhookAttempt(delivery, "d2", retry, { at: at(404), durationMs: 1000 }), false, "not the owner");
      assert.equal(await store.recordWebhookAttempt(delivery, "d1", retry, { at: at(404), durationMs: 1000 }), true);
      assert.deepEqual(await claimDueDeliveries(store, { owner: "d2", now: at(499), leaseExpiresAt: at(560), limit: 10 }), []);
      const [again] = await claimDueDeliveries(store, { owner: "d2", now: at(500), leaseExpiresAt: at(560), limit: 10 });
      assert.deepEqual([again?.eventId, again?.attempts], [delivery.eventId, 1]);
      // d2 dies; after its lease d3 gets the row, and it is delivered once.
      const [third] = await claimDueDeliveries(store, { owner: "d3", now: at(560), leaseExpiresAt: at(620), limit: 10 });
      assert.equal(third?.eventId, delivery.eventId);
      assert.equal(await store.countPendingWebhookDeliveries(), 1, "a claimed row is still pending");
      assert.equal(await store.recordWebhookAttempt(third!, "d3", { kind: "delivered", httpStatus: 204 }, { at: at(560), durationMs: 1000 }), true);
      assert.equal(await store.countPendingWebhookDeliveries(), 0);
      assert.equal(await store.recordWebhookAttempt(again!, "d2", { kind: "delivered", httpStatus: 200 }, { at: at(561), durationMs: 1000 }), false);
      assert.deepEqual(await claimDueDeliveries(store, { owner: "d4", now: at(9999), leaseExpiresAt: at(9999), limit: 10 }), []);
    }));

    test("ensureWebhookSecret keeps the first secret and knows no unknown company", () => withStore(backend, async (store) => {
      assert.equal(await store.ensureWebhookSecret(6, "whsec_first"), "whsec_first");
      assert.equal(await store.ensureWebhookSecret(6, "whsec_second"), "whsec_first");
      assert.equal((await store.getWebhookSecrets(6))?.current, "whsec_first");
      assert.equal(await store.ensureWebhookSecret(424242, "whsec_x"), undefined);
    }));
  });
}
