/**
 * The lifecycle methods under concurrency, on every backend: calls are fired together, so on
 * PostgreSQL they run at the same time on different pool connections (row locks and
 * SKIP LOCKED decide), and on SQLite they take turns on the single writer.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import type { AddWorkItemOutcome, DueItem, SlotGrant, Store } from "../../src/store/store.ts";
import type { StoreLocation } from "../../src/config.ts";
import { availableBackends, countRows, openFreshStore, type Backend } from "../helpers/backends.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { claimDueDeliveries, claimEverything, queueAll } from "../helpers/sweeps.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const add = (store: Store, companyId: number, batchMaxItems: number, webhookUrl: string | null = null, deadlineAt: string | null = null): Promise<AddWorkItemOutcome> =>
  store.addWorkItem({
    companyId,
    workType: WORK_TYPE_AUTHORITY_RVDM,
    customerReference: "concurrent",
    documentReference: null,
    webhookUrl,
    request: validWorkItem(),
    batchMaxItems,
    ...(deadlineAt ? { deadlineAt } : {}),
  });

const keyOf = (outcome: AddWorkItemOutcome) => {
  assert.equal(outcome.kind, "created");
  return outcome.kind === "created" ? outcome.key : { workBatchId: 0, workItemId: 0 };
};

const inAMinute = () => new Date(Date.now() + 60_000).toISOString();

/** One bot pass's filing with the real clock: every item due is claimed and filed as succeeded. */
async function fileEverything(store: Store, owner: string): Promise<number> {
  const now = new Date().toISOString();
  const items = await claimEverything(store, { owner, now, dueBefore: now, leaseExpiresAt: inAMinute() });
  for (const item of items) {
    const result = { registrationNumber: `R-${item.workItemId}`, registeredAt: new Date().toISOString() };
    const claim = { companyId: item.companyId, workItemId: item.workItemId, owner };
    assert.equal(await store.recordItemOutcome(claim, { kind: "succeeded", result }, { now: new Date().toISOString() }), true);
  }
  return items.length;
}

async function withStore(backend: Backend, body: (store: Store, location: StoreLocation) => Promise<void>): Promise<void> {
  const { store, location, cleanup } = await openFreshStore(backend);
  try {
    for (const companyId of [1, 2, 3, 4]) await store.createCompany({ companyId, name: `c${companyId}` });
    await body(store, location);
  } finally {
    await cleanup();
  }
}

for (const backend of await availableBackends()) {
  describe(`store lifecycle under concurrency [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("claimers racing for the queue never get the same item, and each holds what it got", () => withStore(backend, async (store) => {
      // 48 items over four companies, in batches of 5, with three deadlines and none: lanes of
      // every kind, several per company, so the claims run dry and move on while they race.
      const soon = Date.now() + 3600_000;
      const deadlines = [new Date(soon).toISOString(), new Date(soon + 3600_000).toISOString(), new Date(Date.now() - 3600_000).toISOString(), null];
      const ids: number[] = [];
      for (let i = 0; i < 48; i++) ids.push(keyOf(await add(store, 1 + (i % 4), 5, null, deadlines[Math.floor(i / 4) % 4]!)).workItemId);
      assert.equal(await queueAll(store, new Date().toISOString()), 12);
      const now = new Date().toISOString();
      const claimers = Array.from({ length: 10 }, (_, i) => `w${i}`);
      const raced = await Promise.all(claimers.map((owner, i) => claimEverything(store, { owner, now, dueBefore: now, leaseExpiresAt: inAMinute(), limit: 1 + (i % 4) })));
      const claimed = raced.flat();
      // A claimer that found every remaining item locked stops early; whatever it left is still there.
      const left = await claimEverything(store, { owner: "last", now, dueBefore: now, leaseExpiresAt: inAMinute() });
      assert.deepEqual([...claimed, ...left].map((item) => item.workItemId).sort((a, b) => a - b), [...ids].sort((a, b) => a - b), "every item claimed exactly once");
      assert.ok(claimed.length >= 24, `the racing claimers got ${claimed.length} of 48`);
      assert.ok(raced.filter((items) => items.length > 0).length >= 2, "more than one claimer got items");

      // Each item is held by the claimer that got it: only its writes count, whatever the order.
      const holders = [...raced.map((items, i) => ({ owner: claimers[i]!, items })), { owner: "last", items: left }];
      const writes = holders.flatMap(({ owner, items }, i) =>
        items.flatMap((item: DueItem) => {
          const other = holders[(i + 1) % holders.length]!.owner;
          const outcome = (by: string) => ({ kind: "retried" as const, nextAttemptAt: inAMinute(), lastError: `by ${by}` });
          return [
            store.recordItemOutcome({ companyId: item.companyId, workItemId: item.workItemId, owner: other }, outcome(other), { now }).then((ok) => ["other", ok] as const),
            store.recordItemOutcome({ companyId: item.companyId, workItemId: item.workItemId, owner }, outcome(owner), { now }).then((ok) => ["holder", ok] as const),
          ];
        }),
      );
      const results = await Promise.all(writes);
      assert.deepEqual(results.filter(([by, ok]) => (by === "holder") !== ok), [], "the holders' writes, and only theirs, were taken");
      for (const id of ids.slice(0, 8)) assert.deepEqual([(await store.getWorkItem(1 + (ids.indexOf(id) % 4), id))?.attempts], [1]);
    }));

    test("workers claiming and recording outcomes at the same time: every item decided, none in two hands at once, no claim or outcome fails", () => withStore(backend, async (store) => {
      // As bot workers run: each claims a few items, records an outcome for each while the others
      // claim (a transient failure puts it back in its lane, due at once), and claims again.
      const soon = Date.now() + 3600_000;
      const deadlines = [new Date(soon).toISOString(), new Date(Date.now() - 3600_000).toISOString(), null];
      const ids: number[] = [];
      for (let i = 0; i < 60; i++) ids.push(keyOf(await add(store, 1 + (i % 4), 7, null, deadlines[i % 3]!)).workItemId);
      await queueAll(store, new Date().toISOString());
      const inHand = new Map<number, string>();
      const decided = new Set<number>();
      const worker = async (owner: string) => {
        for (let idle = 0; decided.size < ids.length && idle < 200; ) {
          const now = new Date().toISOString();
          const items = await store.claimFilingWork({ owner, now, dueBefore: now, leaseExpiresAt: inAMinute(), limit: 3 });
          if (items.length === 0) {
            idle += 1;
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          for (const item of items) {
            assert.equal(inHand.get(item.workItemId), undefined, `item ${item.workItemId} claimed by ${owner} while ${inHand.get(item.workItemId)} holds it`);
            inHand.set(item.workItemId, owner);
          }
          await Promise.all(items.map(async (item) => {
            const claim = { companyId: item.companyId, workItemId: item.workItemId, owner };
            const outcome = item.attempts < 2 && item.workItemId % 2 === 0
              ? { kind: "retried" as const, nextAttemptAt: new Date().toISOString(), lastError: "503" }
              : { kind: "submitted" as const, applicationNumber: `A-${item.workItemId}`, submittedAt: now, nextPollAt: inAMinute() };
            inHand.delete(item.workItemId);
            assert.equal(await store.recordItemOutcome(claim, outcome, { now: new Date().toISOString() }), true);
            if (outcome.kind === "submitted") decided.add(item.workItemId);
          }));
        }
      };
      await Promise.all(["w1", "w2", "w3", "w4", "w5", "w6"].map(worker));
      assert.equal(decided.size, ids.length);
      for (const [index, id] of ids.entries()) {
        const item = await store.getWorkItem(1 + (index % 4), id);
        assert.deepEqual([item?.status, item?.attempts], ["Submitted", id % 2 === 0 ? 2 : 0], `item ${id}`);
      }
    }));

    test("callers racing for authority slots never hold more than maxConcurrency, nor the same slot", () => withStore(backend, async (store) => {
      const nowMs = Date.now();
      const ask = (holder: string) => store.takeAuthoritySlot("sim", { holder, kind: holder.startsWith("p") ? "status" : "submit", nowMs, probe: false, maxConcurrency: 3, maxRps: 0, holdMs: 60_000 });
      const holders = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? `p${i}` : `s${i}`));
      const grants = await Promise.all(holders.map(ask));
      const granted = grants.flatMap((grant: SlotGrant, i) => (grant.kind === "granted" ? [{ holder: holders[i]!, slot: grant.slot }] : []));
      assert.equal(granted.length, 3, JSON.stringify(grants));
      assert.deepEqual(granted.map((g) => g.slot).sort(), [1, 2, 3]);
      assert.ok(grants.every((grant) => grant.kind === "granted" || grant.kind === "wait"));
      // Released together, taken again together: still three.
      await Promise.all(granted.map((g) => store.releaseAuthoritySlot("sim", g.slot, g.holder)));
      const again = await Promise.all(holders.map((holder) => ask(`${holder}-2`)));
      assert.equal(again.filter((grant) => grant.kind === "granted").length, 3);
    }));

    test("adds racing the bot closing and filing batches: no item is stranded in a batch that was already closed", () => withStore(backend, async (store, location) => {
      // Each wave fires adds for three companies and, at the same moment, one bot pass that
      // takes the Open batches up (holding the previous waves' items) and files them. An add that
      // lands in a batch after it was taken up is left New, outside the queue, in a batch that
      // completes without it (or never completes); both fail below.
      let closed = 0;
      const keys: Array<{ workBatchId: number; workItemId: number }> = [];
      for (let wave = 0; wave < 20; wave++) {
        const adds = Array.from({ length: 20 }, (_, i) => add(store, 1 + (i % 3), 25));
        const pass = (async () => {
          closed += await queueAll(store, new Date().toISOString());
          await fileEverything(store, `bot-${wave}`);
        })();
        const [outcomes] = await Promise.all([Promise.all(adds), pass]);
        keys.push(...outcomes.map(keyOf));
      }
      // A close that runs after its wave's adds committed takes their batches too, and the next
      // wave's close may then find nothing: at least every other wave closes something.
      assert.ok(closed >= 10, `the bot closed ${closed} batches while items were being added`);
      await queueAll(store, new Date().toISOString());
      await fileEverything(store, "bot");

      const batches = new Map<string, { companyId: number; workBatchId: number; items: number }>();
      for (const [index, key] of keys.entries()) {
        const companyId = 1 + ((index % 20) % 3);
        const item = await store.getWorkItem(companyId, key.workItemId);
        assert.equal(item?.status, "Successful", `item ${key.workItemId} was filed, not left behind in a completed batch`);
        const id = `${companyId}/${key.workBatchId}`;
        const entry = batches.get(id) ?? { companyId, workBatchId: key.workBatchId, items: 0 };
        entry.items += 1;
        batches.set(id, entry);
      }
      for (const { companyId, workBatchId, items } of batches.values()) {
        const batch = await store.getWorkBatch(companyId, workBatchId);
        assert.equal(batch?.status, "Completed");
        assert.equal(batch?.counts.successful, items, `batch ${workBatchId} holds exactly the items acknowledged into it`);
      }
      assert.equal((await countRows(location)).workItems, keys.length);
    }));

    test("cancels racing the bot's close: each answer matches what was stored and what the bot did", () => withStore(backend, async (store) => {
      const keys = [];
      for (let i = 0; i < 30; i++) keys.push(keyOf(await add(store, 3, 100)));
      const now = new Date().toISOString();
      const cancels = keys.map((key, i) => (i === 10 ? queueAll(store, now).then(() => undefined) : store.cancelWorkItem(3, key.workItemId, now)));
      const outcomes = await Promise.all(cancels);
      await fileEverything(store, "bot");
      let cancelled = 0;
      for (const [i, outcome] of outcomes.entries()) {
        const item = await store.getWorkItem(3, keys[i]!.workItemId);
        if (outcome === undefined) continue;
        if (outcome.kind === "cancelled") {
          cancelled += 1;
          assert.equal(item?.status, "Cancelled", `item ${keys[i]!.workItemId} stays cancelled`);
        } else {
          assert.equal(outcome.kind === "conflict" && outcome.batchStatus, "Processing", "refused only because the bot took the batch up");
          assert.equal(item?.status, "Successful", "a refused cancel leaves the item to the bot");
        }
      }
      const batch = await store.getWorkBatch(3, keys[0]!.workBatchId);
      assert.deepEqual([batch?.status, batch?.counts.cancelled, batch?.counts.successful], ["Completed", cancelled, 30 - cancelled]);
    }));

    test("dispatchers racing for outbox rows never get the same one; the backlog counts what is left", () => withStore(backend, async (store) => {
      for (let i = 0; i < 20; i++) keyOf(await add(store, 4, 100, "https://hooks.example/4"));
      await queueAll(store, new Date().toISOString());
      assert.equal(await fileEverything(store, "bot"), 20);
      assert.equal(await store.countPendingWebhookDeliveries(), 20);

      const now = new Date().toISOString();
      const leaseExpiresAt = new Date(Date.now() + 60_000).toISOString();
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => claimDueDeliveries(store, { owner: `d${i}`, now, leaseExpiresAt, limit: 5 })));
      const all = claims.flat();
      assert.equal(all.length, 20);
      assert.equal(new Set(all.map((delivery) => delivery.eventId)).size, 20, "no row claimed twice");
      assert.equal(await store.countPendingWebhookDeliveries(), 20, "claimed rows are still pending");

      const recorded = await Promise.all(
        claims.flatMap((deliveries, i) => deliveries.map((delivery) => store.recordWebhookAttempt(delivery, `d${i}`, { kind: "delivered", httpStatus: 200 }, { at: now, durationMs: 5 }))),
      );
      assert.ok(recorded.every(Boolean));
      assert.equal(await store.countPendingWebhookDeliveries(), 0);
    }));
  });
}
