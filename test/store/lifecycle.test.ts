/**
 * Store contract for the lifecycle methods (cancel, batch leases, item outcomes, webhook
 * outbox), run against every backend on a real database.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, type Backend } from "../helpers/backends.ts";
import { addItems } from "../helpers/store-items.ts";
import { claimDueDeliveries, claimNextBatch, closeOpenBatches } from "../helpers/sweeps.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, seconds)).toISOString();

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
  describe(`store lifecycle [${backend.name}]`, { timeout: 60_000 }, () => {

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
      await closeOpenBatches(store, at(3));
      const closed = await store.cancelWorkItem(1, b!.workItemId, at(4));
      assert.equal(closed.kind, "conflict");
      assert.equal(closed.kind === "conflict" && closed.batchStatus, "Closed");
      assert.equal((await store.getWorkItem(1, b!.workItemId))?.status, "New");
      assert.deepEqual((await store.getWorkBatch(1, a!.workBatchId))?.counts, { new: 1, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 1 });
    }));

    test("listWorkItems by status follows items through every batch state, newest first, with a cursor", () => withStore(backend, async (store) => {
      const statusOf = async (status: string, beforeWorkItemId?: number) =>
        (await store.listWorkItems(3, { limit: 50, status: status as never, ...(beforeWorkItemId ? { beforeWorkItemId } : {}) })).map((i) => i.workItemId);
      // Batch 1 is completed: one item Successful, one Failed. Batch 2 is Processing with one item
      // back to New for a retry and one Successful. Batch 3 is Closed, batch 4 Open: all New.
      const first = await addItems(store, 3, 2);
      await closeOpenBatches(store, at(1));
      const claimed1 = (await claimNextBatch(store, { owner: "w", dueBefore: at(1), leaseExpiresAt: at(60) }))!;
      await store.takeDueItems(claimed1, { now: at(2), dueBefore: at(2), limit: 10, leaseExpiresAt: at(60) });
      const result = { registrationNumber: "R-1", registeredAt: at(3) };
      const error = { code: "AUTHORITY_REJECTED", message: "no", details: [] };
      await store.recordItemOutcome(claimed1, first[0]!.workItemId, { kind: "succeeded", result }, { now: at(3), leaseExpiresAt: at(60) });
      await store.recordItemOutcome(claimed1, first[1]!.workItemId, { kind: "failed", error }, { now: at(3), leaseExpiresAt: at(60) });
      assert.equal(await store.finishBatch(claimed1, { now: at(4) }), "completed");
      const second = await addItems(store, 3, 2);
      await closeOpenBatches(store, at(5));
      const claimed2 = (await claimNextBatch(store, { owner: "w", dueBefore: at(5), leaseExpiresAt: at(60) }))!;
      await store.takeDueItems(claimed2, { now: at(6), dueBefore: at(6), limit: 10, leaseExpiresAt: at(60) });
      await store.recordItemOutcome(claimed2, second[0]!.workItemId, { kind: "retried", nextAttemptAt: at(30), lastError: "503" }, { now: at(7), leaseExpiresAt: at(60) });
      await store.recordItemOutcome(claimed2, second[1]!.workItemId, { kind: "succeeded", result }, { now: at(7), leaseExpiresAt: at(60) });
      assert.equal(await store.finishBatch(claimed2, { now: at(8) }), "pending");
      const third = await addItems(store, 3, 2);
      await closeOpenBatches(store, at(9));
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

    test("batch leases: one claimer at a time, expired leases are taken over, writes of the old owner are fenced off", () => withStore(backend, async (store) => {
      const keys = await addItems(store, 2, 3, "https://hooks.example/x");
      assert.equal(await closeOpenBatches(store, at(10)), 1);
      const first = await claimNextBatch(store, { owner: "w1", dueBefore: at(10), leaseExpiresAt: at(40) });
      assert.ok(first);
      assert.equal(first.workBatchId, keys[0]!.workBatchId);
      assert.equal((await store.getWorkBatch(2, first.workBatchId))?.status, "Processing");
      assert.equal(await claimNextBatch(store, { owner: "w2", dueBefore: at(20), leaseExpiresAt: at(50) }), undefined, "a held lease is not claimable");

      const taken = await store.takeDueItems(first, { now: at(11), dueBefore: at(10), limit: 2, leaseExpiresAt: at(41) });
      assert.deepEqual(taken?.map((i) => i.workItemId), [keys[0]!.workItemId, keys[1]!.workItemId]);
      assert.equal(taken?.[0]?.request.customerReference, "ORDER-1");
      assert.equal((await store.getWorkItem(2, keys[0]!.workItemId))?.status, "InProgress");

      // w1 dies; after its lease w2 takes the batch and gets the InProgress items again.
      const second = await claimNextBatch(store, { owner: "w2", dueBefore: at(45), leaseExpiresAt: at(75) });
      assert.equal(second?.workBatchId, first.workBatchId);
      assert.equal(second?.leaseOwner, "w2");
      const result = { registrationNumber: "RVDM-1", registeredAt: at(46) };
      assert.equal(await store.recordItemOutcome(first, keys[0]!.workItemId, { kind: "succeeded", result }, { now: at(46), leaseExpiresAt: at(80) }), false);
      assert.equal(await store.takeDueItems(first, { now: at(46), dueBefore: at(45), limit: 9, leaseExpiresAt: at(80) }), undefined);
      assert.equal(await store.finishBatch(first, { now: at(46) }), "leaseLost");
      assert.equal((await store.getWorkItem(2, keys[0]!.workItemId))?.status, "InProgress", "the fenced write changed nothing");

      const resumed = await store.takeDueItems(second!, { now: at(46), dueBefore: at(45), limit: 9, leaseExpiresAt: at(80) });
      assert.deepEqual(resumed?.map((i) => i.workItemId), keys.map((k) => k.workItemId));
      assert.equal(await store.recordItemOutcome(second!, keys[0]!.workItemId, { kind: "succeeded", result }, { now: at(47), leaseExpiresAt: at(80) }), true);
      const error = { code: "AUTHORITY_REJECTED", message: "no", details: [{ field: "senderChamberOfCommerceNo", message: "8 digits" }] };
      assert.equal(await store.recordItemOutcome(second!, keys[1]!.workItemId, { kind: "failed", error }, { now: at(47), leaseExpiresAt: at(80) }), true);
      assert.equal(
        await store.recordItemOutcome(second!, keys[2]!.workItemId, { kind: "retried", nextAttemptAt: at(90), lastError: "503" }, { now: at(47), leaseExpiresAt: at(80) }),
        true,
      );
      assert.equal(await store.recordItemOutcome(second!, keys[0]!.workItemId, { kind: "succeeded", result }, { now: at(48), leaseExpiresAt: at(80) }), false, "only InProgress items move");

      const succeeded = await store.getWorkItem(2, keys[0]!.workItemId);
      assert.deepEqual([succeeded?.status, succeeded?.result, succeeded?.completedAt], ["Successful", result, at(47)]);
      const failed = await store.getWorkItem(2, keys[1]!.workItemId);
      assert.deepEqual([failed?.status, failed?.error, failed?.attempts], ["Failed", error, 0]);
      const retried = await store.getWorkItem(2, keys[2]!.workItemId);
      assert.deepEqual([retried?.status, retried?.attempts, retried?.completedAt], ["New", 1, null]);

      // Not due yet: nothing to take; the batch is released until the retry is due.
      assert.deepEqual(await store.takeDueItems(second!, { now: at(48), dueBefore: at(45), limit: 9, leaseExpiresAt: at(80) }), []);
      assert.equal(await store.finishBatch(second!, { now: at(48) }), "pending");
      assert.equal(await claimNextBatch(store, { owner: "w3", dueBefore: at(89), leaseExpiresAt: at(120) }), undefined, "asleep until next_run_at");
      const third = await claimNextBatch(store, { owner: "w3", dueBefore: at(90), leaseExpiresAt: at(120) });
      assert.equal(third?.workBatchId, first.workBatchId);
      const due = await store.takeDueItems(third!, { now: at(91), dueBefore: at(90), limit: 9, leaseExpiresAt: at(120) });
      assert.deepEqual(due?.map((i) => [i.workItemId, i.attempts]), [[keys[2]!.workItemId, 1]]);
      const unavailable = { code: "AUTHORITY_UNAVAILABLE", message: "down", details: [] };
      await store.recordItemOutcome(third!, keys[2]!.workItemId, { kind: "failed", error: unavailable, transient: true, lastError: "503" }, { now: at(92), leaseExpiresAt: at(120) });
      assert.equal((await store.getWorkItem(2, keys[2]!.workItemId))?.attempts, 2);
      assert.equal(await store.finishBatch(third!, { now: at(93) }), "completed");
      const batch = await store.getWorkBatch(2, first.workBatchId);
      assert.deepEqual([batch?.status, batch?.completedAt, batch?.counts], ["Completed", at(93), { new: 0, inProgress: 0, submitted: 0, successful: 1, failed: 2, cancelled: 0 }]);

      // Each terminal item with a webhook URL left exactly one outbox row; the retry left none.
      const deliveries = await claimDueDeliveries(store, { owner: "d1", now: at(100), leaseExpiresAt: at(160), limit: 50 });
      assert.deepEqual(deliveries.map((d) => [d.workItemId, d.eventType]).sort(), [
        [keys[0]!.workItemId, "workitem.succeeded"],
        [keys[1]!.workItemId, "workitem.failed"],
        [keys[2]!.workItemId, "workitem.failed"],
      ].sort());
      assert.ok(deliveries.every((d) => /^msg_[0-9a-f]{32}$/.test(d.eventId) && d.url === "https://hooks.example/x" && d.attempts === 0));
    }));

    test("two stages: earliest deadline first, Submitted until decided, workitem.submitted on the first pending answer only", () => withStore(backend, async (store) => {
      const keys = await addItems(store, 4, 3, "https://hooks.example/x", [at(300), at(100), at(200)]);
      const ids = keys.map((k) => k.workItemId);
      await closeOpenBatches(store, at(1));
      const batch = (await claimNextBatch(store, { owner: "w1", dueBefore: at(1), leaseExpiresAt: at(60) }))!;
      const due = await store.takeDueItems(batch, { now: at(2), dueBefore: at(1), limit: 9, leaseExpiresAt: at(60) });
      assert.deepEqual(due?.map((i) => i.workItemId), [ids[1], ids[2], ids[0]], "earliest deadline first");
      assert.deepEqual(due?.map((i) => i.deadlineAt), [at(100), at(200), at(300)]);

      const lease = { leaseExpiresAt: at(60) };
      for (const [index, id] of ids.entries()) {
        const submitted = { kind: "submitted" as const, applicationNumber: `RVDM-A-${index}`, submittedAt: at(3), nextPollAt: at(3) };
        assert.equal(await store.recordItemOutcome(batch, id!, submitted, { now: at(3), ...lease }), true);
      }
      const view = await store.getWorkItem(4, ids[0]!);
      assert.deepEqual([view?.status, view?.authority], ["Submitted", { applicationNumber: "RVDM-A-0", registrationNumber: null, submittedAt: at(3), decidedAt: null }]);

      const toPoll = await store.submittedItemsDue(batch, { dueBefore: at(4), afterWorkItemId: 0, limit: 2, ...lease });
      assert.deepEqual(toPoll?.map((i) => [i.workItemId, i.applicationNumber, i.polls]), [[ids[0], "RVDM-A-0", 0], [ids[1], "RVDM-A-1", 0]], "a page in id order");
      const rest = await store.submittedItemsDue(batch, { dueBefore: at(4), afterWorkItemId: ids[1]!, limit: 2, ...lease });
      assert.deepEqual(rest?.map((i) => i.workItemId), [ids[2]]);

      // Item 0: pending twice, then registered. Item 1: rejected. Item 2: stays pending.
      assert.equal(await store.recordItemOutcome(batch, ids[0]!, { kind: "pending", nextPollAt: at(10), lastError: null }, { now: at(5), ...lease }), true);
      assert.deepEqual(await store.submittedItemsDue(batch, { dueBefore: at(9), afterWorkItemId: ids[0]! - 1, limit: 1, ...lease }).then((r) => r?.map((i) => i.workItemId)), [ids[1]], "not due before its next poll");
      assert.equal(await store.recordItemOutcome(batch, ids[0]!, { kind: "pending", nextPollAt: at(20), lastError: "AuthorityUnavailableError: 503" }, { now: at(11), ...lease }), true);
      const result = { registrationNumber: "RVDM-2026-X", registeredAt: at(21) };
      assert.equal(await store.recordItemOutcome(batch, ids[0]!, { kind: "succeeded", result }, { now: at(21), ...lease }), true);
      const rejected = { code: "AUTHORITY_REJECTED", message: "no", details: [{ field: "exportDate", message: "in the past" }] };
      assert.equal(await store.recordItemOutcome(batch, ids[1]!, { kind: "failed", decided: true, error: rejected }, { now: at(6), ...lease }), true);
      assert.equal(await store.recordItemOutcome(batch, ids[2]!, { kind: "pending", nextPollAt: at(40), lastError: null }, { now: at(6), ...lease }), true);

      const registered = await store.getWorkItem(4, ids[0]!);
      assert.deepEqual([registered?.status, registered?.result, registered?.authority], ["Successful", result, { applicationNumber: "RVDM-A-0", registrationNumber: "RVDM-2026-X", submittedAt: at(3), decidedAt: at(21) }]);
      const failed = await store.getWorkItem(4, ids[1]!);
      assert.deepEqual([failed?.status, failed?.authority.applicationNumber, failed?.authority.decidedAt, failed?.attempts], ["Failed", "RVDM-A-1", at(6), 0]);

      assert.equal(await store.finishBatch(batch, { now: at(22) }), "pending", "an item still Submitted keeps the batch open");
      assert.equal((await store.getWorkBatch(4, batch.workBatchId))?.counts.submitted, 1);
      assert.equal(await claimNextBatch(store, { owner: "w2", dueBefore: at(39), leaseExpiresAt: at(99) }), undefined, "nothing due until its next poll");
      const again = (await claimNextBatch(store, { owner: "w2", dueBefore: at(40), leaseExpiresAt: at(99) }))!;
      assert.equal(await store.recordItemOutcome(again, ids[2]!, { kind: "succeeded", result }, { now: at(41), leaseExpiresAt: at(99) }), true);
      assert.equal(await store.finishBatch(again, { now: at(42) }), "completed");

      const events = await claimDueDeliveries(store, { owner: "d", now: at(50), leaseExpiresAt: at(99), limit: 20 });
      const byItem = (id: number) => events.filter((e) => e.workItemId === id).map((e) => e.eventType).sort();
      assert.deepEqual(byItem(ids[0]!), ["workitem.submitted", "workitem.succeeded"], "one submitted event, however many pending answers");
      assert.deepEqual(byItem(ids[1]!), ["workitem.failed"], "decided at the first question: no submitted event");
      assert.deepEqual(byItem(ids[2]!), ["workitem.submitted", "workitem.succeeded"]);
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
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "closed", until: null });
      await store.openAuthorityBreaker("sim", { until: at(60), now: at(0) });
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "open", until: at(60) });
      assert.deepEqual(await store.getAuthorityBreaker("other"), { state: "closed", until: null }, "one breaker per authority");
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "a", until: at(70), now: at(59) }), false, "not before it is due");
      const claims = await Promise.all(["a", "b", "c"].map((owner) => store.claimAuthorityBreakerProbe("sim", { owner, until: at(70), now: at(60) })));
      assert.deepEqual(claims.filter(Boolean).length, 1, "one probe");
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "halfOpen", until: at(70) });
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "b", until: at(80), now: at(71) }), true, "a probe whose turn ran out is given to another");
      await store.closeAuthorityBreaker("sim", at(72));
      assert.deepEqual(await store.getAuthorityBreaker("sim"), { state: "closed", until: null });
      assert.equal(await store.claimAuthorityBreakerProbe("sim", { owner: "a", until: at(90), now: at(73) }), false, "no probe while closed");
    }));

    test("a batch whose items are all cancelled is closed and completes", () => withStore(backend, async (store) => {
      const [only] = await addItems(store, 3, 1);
      await store.cancelWorkItem(3, only!.workItemId, at(200));
      await closeOpenBatches(store, at(201));
      const claimed = await claimNextBatch(store, { owner: "w", dueBefore: at(201), leaseExpiresAt: at(260) });
      assert.equal(claimed?.companyId, 3);
      assert.deepEqual(await store.takeDueItems(claimed!, { now: at(202), dueBefore: at(201), limit: 5, leaseExpiresAt: at(260) }), []);
      assert.equal(await store.finishBatch(claimed!, { now: at(203) }), "completed");
      assert.deepEqual((await store.getWorkBatch(3, only!.workBatchId))?.counts, { new: 0, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 1 });
    }));

    test("closeOpenBatches closes each company's Open batch once; a new item then opens a new batch", () => withStore(backend, async (store) => {
      const [firstKey] = await addItems(store, 4, 1);
      await addItems(store, 5, 2);
      assert.equal(await closeOpenBatches(store, at(300)), 2);
      assert.equal(await closeOpenBatches(store, at(301)), 0);
      assert.equal((await store.getWorkBatch(4, firstKey!.workBatchId))?.closedAt, at(300));
      const [secondKey] = await addItems(store, 4, 1);
      assert.notEqual(secondKey!.workBatchId, firstKey!.workBatchId);
      assert.equal((await store.getWorkBatch(4, secondKey!.workBatchId))?.status, "Open");
    }));

    test("webhook outbox: claims are leased, attempts recorded, only the owner may record", () => withStore(backend, async (store) => {
      const [key] = await addItems(store, 5, 1, "https://hooks.example/5");
      await closeOpenBatches(store, at(400));
      const claimed = await claimNextBatch(store, { owner: "w", dueBefore: at(400), leaseExpiresAt: at(460) });
      await store.takeDueItems(claimed!, { now: at(401), dueBefore: at(400), limit: 5, leaseExpiresAt: at(460) });
      assert.equal(await store.countPendingWebhookDeliveries(), 0);
      await store.recordItemOutcome(claimed!, key!.workItemId, { kind: "succeeded", result: { registrationNumber: "R", registeredAt: at(401) } }, { now: at(402), leaseExpiresAt: at(460) });
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
