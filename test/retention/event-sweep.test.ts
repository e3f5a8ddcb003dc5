/**
 * Events older than EVENT_RETENTION_DAYS leave the feed (SPEC §11.2, §13): a sweep bounded per
 * pass and per statement, company by company, that leaves younger events alone, on both
 * stores; positions go on, so a reader's cursor stays good across a sweep.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadConfig } from "../../src/config.ts";
import { sweepExpiredEvents } from "../../src/retention/event-sweep.ts";
import type { Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { addItems } from "../helpers/store-items.ts";

// Every statement the sweep sends must name its company (checked at the end).
recordStoreStatements();

const DAY = 86_400_000;
const now = new Date();
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY).toISOString();

/** `count` items of the company, each flagged at risk at `flaggedAt`: one event each. */
async function eventsAt(store: Store, companyId: number, count: number, flaggedAt: string): Promise<void> {
  await addItems(store, companyId, count, null, Array.from({ length: count }, () => daysAgo(60)));
  assert.equal(await store.flagDeadlinesAtRisk(companyId, { riskBefore: now.toISOString(), now: flaggedAt }), count);
}

const positionsOf = async (store: Store, companyId: number, afterPosition = 0) =>
  (await store.listEvents(companyId, { afterPosition, limit: 500 })).map((e) => e.position);

for (const backend of await availableBackends()) {
  describe(`event sweep [${backend.name}]`, () => {
    test("deletes only events past the retention, at most maxRows a pass in chunks, across companies; positions go on", async () => {
      const { store, cleanup } = await openFreshStore(backend);
      try {
        for (const companyId of [1, 2]) await store.createCompany({ companyId, name: `c${companyId}` });
        await eventsAt(store, 1, 3, daysAgo(40));
        await eventsAt(store, 2, 2, daysAgo(31));
        await eventsAt(store, 1, 1, daysAgo(29));
        assert.deepEqual(await positionsOf(store, 1), [1, 2, 3, 4]);

        const pass = () => sweepExpiredEvents(store, { now, retentionDays: 30, maxRows: 4, chunkRows: 3 });
        assert.equal(await pass(), 4, "the first pass stops at its bound");
        assert.equal(await pass(), 1);
        assert.equal(await pass(), 0, "nothing left to sweep");
        assert.deepEqual(await positionsOf(store, 1), [4], "the 29-day-old event stays");
        assert.deepEqual(await positionsOf(store, 2), []);

        // A reader whose cursor points at a swept event goes on from there; new events get new positions.
        await eventsAt(store, 2, 1, now.toISOString());
        assert.deepEqual(await positionsOf(store, 2, 1), [3]);
        assert.equal(await sweepExpiredEvents(store, { now, retentionDays: 7, maxRows: 100 }), 1, "a shorter retention reaches the 29-day-old one");
        assert.deepEqual(await positionsOf(store, 1), []);
        assert.deepEqual(await positionsOf(store, 2), [3]);
      } finally {
        await cleanup();
      }
    });
  });
}

test("EVENT_RETENTION_DAYS defaults to 30 and takes whole days from 1", () => {
  assert.equal(loadConfig({}).eventRetentionDays, 30);
  assert.equal(loadConfig({ EVENT_RETENTION_DAYS: "7" }).eventRetentionDays, 7);
  assert.throws(() => loadConfig({ EVENT_RETENTION_DAYS: "0" }), /EVENT_RETENTION_DAYS/);
});
