/**
 * The event feed in the store (SPEC §11.2), on both backends: every event is stored in the
 * transaction that causes it, under the id of its outbox row when the item has a webhook_url;
 * each company's events are numbered 1, 2, 3… in commit order; and a reader that polls with
 * the last position it saw gets every event once, in order, however the writers interleave.
 * On PostgreSQL a writer's transaction is held open while a reader polls, to show that a later
 * commit is never skipped.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import pg from "pg";
import type { WorkItemView } from "../../src/domain/views.ts";
import type { FeedEvent, ItemClaim, ListEventsQuery, Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, type Backend } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { claimDueDeliveries, claimEverything, queueAll } from "../helpers/sweeps.ts";
import { addItems } from "../helpers/store-items.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, seconds)).toISOString();
const result = { registrationNumber: "RVDM-2026-1", registeredAt: at(30) };
const rejected = { code: "AUTHORITY_REJECTED" as const, message: "no", details: [{ field: "exportDate", message: "in the past" }] };

async function addItem(store: Store, companyId: number, webhookUrl: string | null, deadlineAt?: string): Promise<number> {
  return (await addItems(store, companyId, 1, webhookUrl, deadlineAt ? [deadlineAt] : []))[0]!.workItemId;
}

/** Takes every Open batch up and claims every item due for `owner` (InProgress); the claims of the items, by id. */
async function claimAll(store: Store, owner: string): Promise<Map<number, ItemClaim>> {
  await queueAll(store, at(1));
  const items = await claimEverything(store, { owner, now: at(2), dueBefore: at(1), leaseExpiresAt: at(600) });
  assert.ok(items.length > 0);
  return new Map(items.map((item) => [item.workItemId, { companyId: item.companyId, workItemId: item.workItemId, owner }]));
}

async function withStore(backend: Backend, body: (store: Store, databaseUrl: string) => Promise<void>): Promise<void> {
  const { store, databaseUrl, cleanup } = await openFreshStore(backend);
  try {
    for (const companyId of [1, 2]) await store.createCompany({ companyId, name: `c${companyId}` });
    await body(store, databaseUrl);
  } finally {
    await cleanup();
  }
}

/** A stored event with its data parsed. */
type Event = Omit<FeedEvent, "dataJson"> & { data: WorkItemView };

const feedOf = async (store: Store, companyId: number, query: Partial<ListEventsQuery> = {}): Promise<Event[]> =>
  (await store.listEvents(companyId, { afterPosition: 0, limit: 500, ...query })).map(({ dataJson, ...event }) => ({ ...event, data: JSON.parse(dataJson) as WorkItemView }));

/** Polls the company's feed from the start, `limit` at a time, until `count` events came or time is up. */
async function pollUntil(store: Store, companyId: number, count: number, limit: number): Promise<Event[]> {
  const seen: Event[] = [];
  await waitUntil(`${count} events`, async () => {
    seen.push(...(await feedOf(store, companyId, { afterPosition: seen.at(-1)?.position ?? 0, limit })));
    return seen.length >= count;
  }, 20_000, 1);
  return seen;
}

for (const backend of await availableBackends()) {
  describe(`event feed store [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("every event is stored with its outbox id, numbered per company, with the item view at the event", () => withStore(backend, async (store) => {
      const hooked = await addItem(store, 1, "https://hooks.example/a");
      const quiet = await addItem(store, 1, null, at(50));
      const theirs = await addItem(store, 2, "https://hooks.example/b");
      assert.equal(await store.flagDeadlinesAtRisk(1, { riskBefore: at(100), now: at(1) }), 1);
      const claims = await claimAll(store, "w1");
      assert.deepEqual([...claims.keys()].sort((a, b) => a - b), [hooked, quiet, theirs]);
      const claim = (id: number) => claims.get(id)!;
      for (const id of [hooked, quiet, theirs]) {
        const submitted = { kind: "submitted" as const, applicationNumber: `A-${id}`, submittedAt: at(3), nextPollAt: at(4) };
        assert.equal(await store.recordItemOutcome(claim(id), submitted, { now: at(3) }), true);
      }
      const polls = await store.claimStatusRequests({ owner: "w1", dueBefore: at(4), leaseExpiresAt: at(600), limit: 10 });
      assert.deepEqual(polls.map((i) => i.workItemId).sort((a, b) => a - b), [hooked, quiet, theirs]);
      const pending = { kind: "pending" as const, nextPollAt: at(5), lastError: null };
      assert.equal(await store.recordItemOutcome(claim(hooked), pending, { now: at(5) }), true);
      assert.equal((await store.claimStatusRequests({ owner: "w1", dueBefore: at(5), leaseExpiresAt: at(600), limit: 10 })).length, 1);
      assert.equal(await store.recordItemOutcome(claim(hooked), pending, { now: at(6) }), true, "a second pending answer emits nothing");
      assert.equal((await store.claimStatusRequests({ owner: "w1", dueBefore: at(6), leaseExpiresAt: at(600), limit: 10 })).length, 1);
      assert.equal(await store.recordItemOutcome(claim(quiet), { kind: "failed", decided: true, error: rejected }, { now: at(7) }), true);
      assert.equal(await store.recordItemOutcome(claim(hooked), { kind: "succeeded", result }, { now: at(30) }), true);
      assert.equal(await store.recordItemOutcome(claim(theirs), { kind: "succeeded", result }, { now: at(8) }), true);

      const mine = await feedOf(store, 1);
      assert.deepEqual(mine.map((e) => [e.position, e.type, e.data.workItemId, e.timestamp]), [
        [1, "workitem.deadline_at_risk", quiet, at(1)],
        [2, "workitem.submitted", hooked, at(5)],
        [3, "workitem.failed", quiet, at(7)],
        [4, "workitem.succeeded", hooked, at(30)],
      ]);
      assert.deepEqual(mine.map((e) => e.data.status), ["New", "Submitted", "Failed", "Successful"], "the view at the event");
      assert.equal(mine[1]!.data.authority.applicationNumber, `A-${hooked}`);
      assert.equal(mine[1]!.data.result, null);
      assert.deepEqual(mine[3]!.data, await store.getWorkItem(1, hooked));
      const others = await feedOf(store, 2);
      assert.deepEqual(others.map((e) => [e.position, e.type, e.data.workItemId]), [[1, "workitem.succeeded", theirs]], "each company counts from 1");

      // The outbox holds the events of items with a webhook_url, under the same ids; the others have none.
      const deliveries = await claimDueDeliveries(store, { owner: "d", now: at(100), leaseExpiresAt: at(200), limit: 50 });
      const key = (e: { eventId: string; workItemId: number }) => `${e.eventId} ${e.workItemId}`;
      assert.deepEqual(
        deliveries.map((d) => `${key(d)} ${d.eventType}`).sort(),
        [...mine, ...others].filter((e) => e.data.webhookUrl).map((e) => `${key({ eventId: e.eventId, workItemId: e.data.workItemId })} ${e.type}`).sort(),
      );
      assert.ok(!deliveries.some((d) => d.workItemId === quiet));

      // Filters and paging.
      assert.deepEqual((await feedOf(store, 1, { type: "workitem.succeeded" })).map((e) => e.position), [4]);
      assert.deepEqual((await feedOf(store, 1, { workItemId: quiet })).map((e) => e.position), [1, 3]);
      assert.deepEqual((await feedOf(store, 1, { workItemId: quiet, type: "workitem.failed" })).map((e) => e.position), [3]);
      assert.deepEqual((await feedOf(store, 1, { afterPosition: 1, limit: 2 })).map((e) => e.position), [2, 3]);
      assert.deepEqual(await feedOf(store, 1, { afterPosition: 4 }), []);
      assert.deepEqual(await feedOf(store, 1, { workItemId: theirs }), [], "another company's item");
    }));

    test("concurrent writers and a polling reader: the reader gets every event once, in commit order, without gaps", () => withStore(backend, async (store) => {
      const count = 40;
      // Two batches, their items held by two owners' claims: every outcome is a writer of its own.
      const ids = [];
      for (let i = 0; i < count / 2; i++) ids.push(await addItem(store, 1, i % 2 === 0 ? "https://hooks.example/a" : null));
      const first = await claimAll(store, "w1");
      for (let i = 0; i < count / 2; i++) ids.push(await addItem(store, 1, null));
      const second = await claimAll(store, "w2");
      assert.deepEqual([first.size, second.size], [count / 2, count / 2]);
      const reader = pollUntil(store, 1, count, 3);
      const writes = ids.map((id, index) =>
        store.recordItemOutcome((first.get(id) ?? second.get(id))!, index % 3 === 0 ? { kind: "failed", decided: true, error: rejected } : { kind: "succeeded", result }, { now: at(10) }),
      );
      assert.deepEqual(await Promise.all(writes), ids.map(() => true));
      const seen = await reader;
      assert.deepEqual(seen.map((e) => e.position), ids.map((_, i) => i + 1), "positions 1..n, each once, in order");
      assert.deepEqual(seen.map((e) => e.data.workItemId).sort((x, y) => x - y), [...ids].sort((x, y) => x - y));
      assert.deepEqual(seen, await feedOf(store, 1), "what the poller saw is the feed");
    }));

    if (backend.name === "postgres") {
      test("a writer that commits late is never skipped: its event waits for it, and so does every later one of its company", () =>
        withStore(backend, async (store, databaseUrl) => {
          // Two batches of company 1 (held by different owners), one of company 2.
          const slow = await addItem(store, 1, "https://hooks.example/slow");
          const slowClaim = (await claimAll(store, "w1")).get(slow)!;
          const fast = await addItem(store, 1, null);
          const fastClaim = (await claimAll(store, "w2")).get(fast)!;
          const other = await addItem(store, 2, null);
          const otherClaim = (await claimAll(store, "w3")).get(other)!;

          // Test instrumentation in this test's schema: inserting the slow item's event waits for
          // an advisory lock the test holds, so its transaction stays open after taking position 1.
          const holder = new pg.Client({ connectionString: databaseUrl });
          await holder.connect();
          try {
            await holder.query(`CREATE FUNCTION hold_event() RETURNS trigger LANGUAGE plpgsql AS $$
              BEGIN PERFORM pg_advisory_xact_lock(4711); RETURN NEW; END $$`);
            await holder.query(`CREATE TRIGGER hold_slow_event AFTER INSERT ON events FOR EACH ROW WHEN (NEW.work_item_id = ${slow}) EXECUTE FUNCTION hold_event()`);
            await holder.query("SELECT pg_advisory_lock(4711)");
            /** Until `count` of the store's sessions wait for a lock. */
            const lockWaiters = (what: string, count: number) =>
              waitUntil(what, async () => {
                const { rows } = await holder.query<{ n: string }>(
                  "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = 'work-item-api' AND wait_event_type = 'Lock' AND state = 'active'",
                );
                return Number(rows[0]!.n) === count;
              });

            const slowWrite = store.recordItemOutcome(slowClaim, { kind: "succeeded", result }, { now: at(10) });
            await lockWaiters("the slow writer to hold position 1", 1);
            const fastWrite = store.recordItemOutcome(fastClaim, { kind: "succeeded", result }, { now: at(11) });
            await lockWaiters("the fast writer to wait for the slow one", 2);

            // A reader polls while the slow transaction is open: nothing of company 1 is visible,
            // so its cursor cannot move past the slow event.
            const polled = await feedOf(store, 1);
            const cursor = polled.at(-1)?.position ?? 0;
            assert.deepEqual(polled, []);
            assert.equal((await store.getWorkItem(1, fast))?.status, "InProgress", "the fast writer has not committed either");
            // Another company is not held up by it.
            assert.equal(await store.recordItemOutcome(otherClaim, { kind: "succeeded", result }, { now: at(12) }), true);
            assert.deepEqual((await feedOf(store, 2)).map((e) => [e.position, e.data.workItemId]), [[1, other]]);
            await sleep(100);
            assert.deepEqual(await feedOf(store, 1), [], "still nothing while the slow writer is open");

            await holder.query("SELECT pg_advisory_unlock(4711)");
            assert.deepEqual(await Promise.all([slowWrite, fastWrite]), [true, true]);
            const next = await feedOf(store, 1, { afterPosition: cursor });
            assert.deepEqual(next.map((e) => [e.position, e.data.workItemId]), [[1, slow], [2, fast]], "the poller gets the late commit, then the one that waited for it");
          } finally {
            await holder.end();
          }
        }));
    }
  });
}
