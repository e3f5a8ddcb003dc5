/**
 * The lifecycle methods under concurrency, on every backend: calls are fired together, so on
 * PostgreSQL they run at the same time on different pool connections (row locks and
 * SKIP LOCKED decide), and on SQLite they take turns on the single writer.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import type { AddWorkItemOutcome, ClaimedBatch, Store } from "../../src/store/store.ts";
import type { StoreLocation } from "../../src/config.ts";
import { availableBackends, countRows, openFreshStore, type Backend } from "../helpers/backends.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { claimDueDeliveries, claimNextBatch, closeOpenBatches } from "../helpers/sweeps.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const add = (store: Store, companyId: number, batchMaxItems: number, webhookUrl: string | null = null): Promise<AddWorkItemOutcome> =>
  store.addWorkItem({
    companyId,
    workType: WORK_TYPE_AUTHORITY_RVDM,
    customerReference: "concurrent",
    documentReference: null,
    webhookUrl,
    request: validWorkItem(),
    batchMaxItems,
  });

const keyOf = (outcome: AddWorkItemOutcome) => {
  assert.equal(outcome.kind, "created");
  return outcome.kind === "created" ? outcome.key : { workBatchId: 0, workItemId: 0 };
};

/** One bot pass with the real clock: every claimable batch is taken, filed as succeeded, finished. */
async function fileEverything(store: Store, owner: string): Promise<number> {
  const dueBefore = new Date().toISOString();
  const lease = new Date(Date.now() + 60_000).toISOString();
  let finished = 0;
  for (let batch: ClaimedBatch | undefined; (batch = await claimNextBatch(store, { owner, dueBefore, leaseExpiresAt: lease })); ) {
    for (;;) {
      const items = await store.takeDueItems(batch, { now: new Date().toISOString(), dueBefore, limit: 50, leaseExpiresAt: lease });
      assert.ok(items, "the lease holds");
      if (items.length === 0) break;
      for (const item of items) {
        const result = { registrationNumber: `R-${item.workItemId}`, registeredAt: new Date().toISOString() };
        assert.equal(await store.recordItemOutcome(batch, item.workItemId, { kind: "succeeded", result }, { now: new Date().toISOString(), leaseExpiresAt: lease }), true);
      }
    }
    assert.equal(await store.finishBatch(batch, { now: new Date().toISOString() }), "completed");
    finished += 1;
  }
  return finished;
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
  describe(`store lifecycle under concurrency [${backend.name}]`, { timeout: 120_000 }, () => {
    test("claimers racing for batches never get the same one", () => withStore(backend, async (store) => {
      // Batches of one item each, over two companies: 12 Closed batches.
      for (let i = 0; i < 12; i++) await add(store, 1 + (i % 2), 1);
      await closeOpenBatches(store, new Date().toISOString());
      const dueBefore = new Date().toISOString();
      const leaseExpiresAt = new Date(Date.now() + 60_000).toISOString();
      const claims = await Promise.all(Array.from({ length: 16 }, (_, i) => claimNextBatch(store, { owner: `w${i}`, dueBefore, leaseExpiresAt })));
      const claimed = claims.filter((claim): claim is ClaimedBatch => claim !== undefined);
      assert.equal(claimed.length, 12, "every batch claimed, the rest of the claimers found nothing");
      assert.equal(new Set(claimed.map((claim) => `${claim.companyId}/${claim.workBatchId}`)).size, 12, "no batch claimed twice");
      for (const claim of claimed) {
        assert.equal((await store.takeDueItems(claim, { now: dueBefore, dueBefore, limit: 9, leaseExpiresAt }))?.length, 1, `${claim.leaseOwner} holds its batch`);
      }
    }));

    test("adds racing the bot closing and filing batches: no item is stranded in a batch that was already closed", () => withStore(backend, async (store, location) => {
      // Each wave fires adds for three companies and, at the same moment, one bot pass that
      // closes the Open batches (holding the previous waves' items) and files them. An add that
      // lands in a batch after it was closed is either refused by finishBatch ("pending", not
      // "completed") or left New in a Completed batch; both fail below.
      let closed = 0;
      const keys: Array<{ workBatchId: number; workItemId: number }> = [];
      for (let wave = 0; wave < 20; wave++) {
        const adds = Array.from({ length: 20 }, (_, i) => add(store, 1 + (i % 3), 25));
        const pass = (async () => {
          closed += await closeOpenBatches(store, new Date().toISOString());
          await fileEverything(store, `bot-${wave}`);
        })();
        const [outcomes] = await Promise.all([Promise.all(adds), pass]);
        keys.push(...outcomes.map(keyOf));
      }
      // A close that runs after its wave's adds committed takes their batches too, and the next
      // wave's close may then find nothing: at least every other wave closes something.
      assert.ok(closed >= 10, `the bot closed ${closed} batches while items were being added`);
      await closeOpenBatches(store, new Date().toISOString());
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
      const cancels = keys.map((key, i) => (i === 10 ? closeOpenBatches(store, now).then(() => undefined) : store.cancelWorkItem(3, key.workItemId, now)));
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
          assert.equal(outcome.kind === "conflict" && outcome.batchStatus, "Closed", "refused only because the batch was closed");
          assert.equal(item?.status, "Successful", "a refused cancel leaves the item to the bot");
        }
      }
      const batch = await store.getWorkBatch(3, keys[0]!.workBatchId);
      assert.deepEqual([batch?.status, batch?.counts.cancelled, batch?.counts.successful], ["Completed", cancelled, 30 - cancelled]);
    }));

    test("dispatchers racing for outbox rows never get the same one; the backlog counts what is left", () => withStore(backend, async (store) => {
      for (let i = 0; i < 20; i++) keyOf(await add(store, 4, 100, "https://hooks.example/4"));
      await closeOpenBatches(store, new Date().toISOString());
      await fileEverything(store, "bot");
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
