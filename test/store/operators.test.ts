/**
 * Store contract for what operators have (SPEC §12): operators and their credentials,
 * counters, the cross-company list, the timeline, retry, cancel, pause and the audit log, run
 * against every backend on a real database.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { OperatorAction, Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, writePastStore, type Backend } from "../helpers/backends.ts";
import { addItems } from "../helpers/store-items.ts";
import { claimEverything, queueAll } from "../helpers/sweeps.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

recordStoreStatements();

// After the items' creation (intake stamps them with the real clock), so timelines sort as they happened.
const base = Date.now() + 60_000;
const at = (seconds: number) => new Date(base + seconds * 1000).toISOString();
const action = (seconds: number, reason = "the authority was down"): OperatorAction => ({
  operator: { operatorId: "op_1", email: "ops@example.com" },
  reason,
  at: at(seconds),
});

async function withStore(backend: Backend, body: (store: Store) => Promise<void>): Promise<void> {
  const { store, cleanup } = await openFreshStore(backend);
  try {
    for (const companyId of [1, 2]) await store.createCompany({ companyId, name: `c${companyId}` });
    await body(store);
  } finally {
    await cleanup();
  }
}

/** Takes up every Open batch, files its items and fails them, as the bot would after a rejection; their batches complete. */
async function failAll(store: Store, seconds: number): Promise<number[]> {
  assert.ok((await queueAll(store, at(seconds))) > 0);
  const items = await claimEverything(store, { owner: "w", now: at(seconds), dueBefore: at(seconds), leaseExpiresAt: at(seconds + 60) });
  for (const item of items) {
    const error = { code: "AUTHORITY_REJECTED" as const, message: "plannedLoad too high", details: [] };
    assert.ok(await store.recordItemOutcome({ companyId: item.companyId, workItemId: item.workItemId, owner: "w" }, { kind: "failed", error, decided: true }, { now: at(seconds + 1) }));
  }
  for (const item of items) assert.equal((await store.getWorkBatch(item.companyId, item.workBatchId))?.status, "Completed");
  return items.map((item) => item.workItemId);
}

for (const backend of await availableBackends()) {
  describe(`what operators have, in the store [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("operators: unique e-mail, disable ends sessions and tokens, a new password ends sessions", () => withStore(backend, async (store) => {
      const created = await store.createOperator({ operatorId: "op_1", email: "a@example.com", role: "viewer", passwordHash: "h1", now: at(0) });
      assert.deepEqual(created, { operatorId: "op_1", email: "a@example.com", role: "viewer", disabled: false, createdAt: at(0), signInMethod: "password" });
      assert.equal(await store.createOperator({ operatorId: "op_2", email: "a@example.com", role: "admin", passwordHash: "h2", now: at(1) }), undefined);
      await store.addOperatorToken({ operatorId: "op_1", tokenHash: "t1", now: at(1) });
      await store.addOperatorSession({ operator: { operatorId: "op_1", email: "a@example.com" }, sessionHash: "s1", now: at(1), signIn: { method: "password" } });
      assert.equal((await store.findOperatorByToken("t1"))?.email, "a@example.com");
      assert.equal((await store.findOperatorBySession("s1", at(0)))?.lastSeenAt, at(1));
      assert.equal(await store.findOperatorBySession("s1", at(2)), undefined, "idle since before the cut-off");
      await store.touchOperatorSession("s1", at(3));
      assert.ok(await store.findOperatorBySession("s1", at(2)));
      assert.ok(await store.setOperatorPassword("a@example.com", "h3"));
      assert.equal(await store.findOperatorBySession("s1", at(0)), undefined);
      assert.equal((await store.findOperatorByEmail("a@example.com"))?.passwordHash, "h3");
      await store.addOperatorSession({ operator: { operatorId: "op_1", email: "a@example.com" }, sessionHash: "s2", now: at(4), signIn: { method: "password" } });
      assert.equal((await store.disableOperator("a@example.com", at(5)))?.disabled, true);
      assert.equal(await store.findOperatorByToken("t1"), undefined);
      assert.equal(await store.findOperatorBySession("s2", at(0)), undefined);
      assert.equal(await store.disableOperator("nobody@example.com", at(5)), undefined);
      assert.deepEqual((await store.listOperators()).map((o) => [o.email, o.disabled]), [["a@example.com", true]]);
    }));

    test("overview: counters follow intake and every state change; open batch items, oldest New, recent failures", () => withStore(backend, async (store) => {
      await addItems(store, 1, 3);
      const failed = await failAll(store, 10);
      await addItems(store, 1, 2);
      await addItems(store, 2, 1);
      const [first] = await store.companyOverview({ now: at(30) });
      assert.deepEqual(first!.counts, { new: 2, inProgress: 0, submitted: 0, successful: 0, failed: 3, cancelled: 0, withdrawn: 0 });
      assert.equal(first!.openBatchItems, 2);
      assert.equal(first!.failedLast24h, 3);
      assert.ok(first!.oldestNewAt);
      const retried = await store.retryWorkItem(failed[0]!, { batchMaxItems: 1000 }, action(40));
      assert.equal(retried.kind, "done");
      const overview = await store.companyOverview({ now: at(50) });
      assert.deepEqual(overview.map((c) => [c.companyId, c.name, c.counts.new, c.counts.failed, c.openBatchItems]), [
        [1, "c1", 3, 2, 3],
        [2, "c2", 1, 0, 1],
      ]);
      const tomorrow = new Date(Date.parse(at(50)) + 25 * 3600_000).toISOString();
      assert.equal((await store.companyOverview({ now: tomorrow }))[0]!.failedLast24h, 0);
    }));

    test("retry: Failed → New in the Open batch with attempts reset, event, audit, timeline; 409 otherwise", () => withStore(backend, async (store) => {
      await addItems(store, 1, 2);
      const [a] = await failAll(store, 10);
      const outcome = await store.retryWorkItem(a!, { batchMaxItems: 1000 }, action(20));
      assert.equal(outcome.kind, "done");
      const item = outcome.kind === "done" ? outcome.item : undefined;
      assert.equal(item?.status, "New");
      assert.equal(item?.companyId, 1);
      assert.equal(item?.attempts, 0);
      assert.equal(item?.error, null);
      const batch = await store.getWorkBatch(1, item!.workBatchId);
      assert.equal(batch?.status, "Open");
      assert.equal((await store.retryWorkItem(a!, { batchMaxItems: 1000 }, action(21))).kind, "conflict");
      assert.equal((await store.retryWorkItem(999_999, { batchMaxItems: 1000 }, action(21))).kind, "notFound");
      const events = await store.listEvents(1, { afterPosition: 0, limit: 100 });
      assert.deepEqual(events.map((e) => e.type), ["workitem.failed", "workitem.failed", "workitem.retried"]);
      const audit = await store.listAudit({ limit: 10 });
      assert.deepEqual(audit.map((e) => [e.action, e.target.companyId, e.target.workItemId, e.reason]), [["workitem.retry", 1, a, "the authority was down"]]);
      const { timeline } = (await store.getWorkItemTimeline(a!))!;
      assert.deepEqual(
        timeline.map((e) => [e.kind, e.status]),
        [["created", "New"], ["status", "InProgress"], ["attempt", null], ["status", "Failed"], ["operator", null], ["status", "New"]],
      );
      assert.match(timeline[2]!.detail!, /Rejected: AUTHORITY_REJECTED: plannedLoad too high/);
      assert.deepEqual(timeline[4]!.operator, { operatorId: "op_1", email: "ops@example.com" });
      assert.equal(timeline[4]!.reason, "the authority was down");
    }));

    test("deadlines: New items past theirs, the next five with their items and companies; none filed yet", () => withStore(backend, async (store) => {
      const now = at(100);
      const hour = (hours: number) => new Date(Date.parse(now) + hours * 3600_000).toISOString();
      await addItems(store, 1, 9, null, [hour(-26), hour(-1), now, hour(2), hour(2), hour(5), hour(30), hour(54), hour(78)]);
      await addItems(store, 2, 3, null, [hour(-1), hour(2), hour(5)]);
      await addItems(store, 1, 1);
      assert.deepEqual(await store.deadlineOverview({ now, limit: 5 }), {
        overdue: 3,
        next: [
          { deadlineAt: now, unsubmitted: 1, companies: 1 },
          { deadlineAt: hour(2), unsubmitted: 3, companies: 2 },
          { deadlineAt: hour(5), unsubmitted: 2, companies: 2 },
          { deadlineAt: hour(30), unsubmitted: 1, companies: 1 },
          { deadlineAt: hour(54), unsubmitted: 1, companies: 1 },
        ],
      });
      assert.deepEqual(await store.deadlineOverview({ now: hour(100), limit: 5 }), { overdue: 12, next: [] });
      assert.equal(await store.countOverdueItems(now), 3, "the items_overdue gauge: the overview's overdue, over all companies");
      assert.equal(await store.countOverdueItems(hour(100)), 12);
      assert.equal(await store.countOverdueItems(hour(-30)), 0);
      assert.deepEqual(await store.deadlineOverview({ now, limit: 2 }), { overdue: 3, next: [{ deadlineAt: now, unsubmitted: 1, companies: 1 }, { deadlineAt: hour(2), unsubmitted: 3, companies: 2 }] });
      // Filed items (and that they leave the deadlines) are tested through the real bot: test/surfaces/operator/overview-deadlines.test.ts.
      assert.equal(await store.countSubmittedSince(at(-3600)), 0, "New items have not been filed");
    }));

    test("retry rolls a full Open batch over, as intake does", () => withStore(backend, async (store) => {
      await addItems(store, 1, 1);
      const [a] = await failAll(store, 10);
      await addItems(store, 1, 2);
      const outcome = await store.retryWorkItem(a!, { batchMaxItems: 2 }, action(20));
      assert.equal(outcome.kind, "done");
      const batch = await store.getWorkBatch(1, outcome.kind === "done" ? outcome.item.workBatchId : 0);
      assert.equal(batch?.status, "Open");
      assert.equal(batch?.counts.new, 1, "a new Open batch, the full one closed");
    }));

    test("bulk retry: by company and code, bounded by its limit", () => withStore(backend, async (store) => {
      await addItems(store, 1, 3);
      await failAll(store, 10);
      await addItems(store, 2, 2);
      await failAll(store, 20);
      assert.equal(await store.retryWorkItems({ companyId: 2, code: "OTHER" }, { batchMaxItems: 1000, limit: 100 }, action(30)), 0);
      assert.equal(await store.retryWorkItems({ companyId: 2, code: "AUTHORITY_REJECTED" }, { batchMaxItems: 1000, limit: 100 }, action(30)), 2);
      assert.equal(await store.retryWorkItems({ failedAfter: at(0) }, { batchMaxItems: 1000, limit: 2 }, action(31)), 2);
      assert.equal(await store.retryWorkItems({}, { batchMaxItems: 1000, limit: 100 }, action(32)), 1);
      assert.equal((await store.listAudit({ limit: 100 })).length, 5);
    }));

    test("operator cancel, pause and resume, redeliver: each with its audit entry", () => withStore(backend, async (store) => {
      const [a] = await addItems(store, 2, 1);
      const cancelled = await store.operatorCancelWorkItem(a!.workItemId, action(1, "customer asked"));
      assert.equal(cancelled.kind, "done");
      assert.equal((await store.operatorCancelWorkItem(a!.workItemId, action(2))).kind, "conflict");
      await store.setWorkTypePaused("AuthorityRvdm", true, action(3, "maintenance"));
      await store.setWorkTypePaused("AuthorityRvdm", true, action(3, "maintenance"));
      assert.deepEqual(await store.pausedWorkTypes(), ["AuthorityRvdm"]);
      await addItems(store, 2, 1);
      assert.equal(await store.queueBatches(2, at(4)), 0, "a paused work type's batches stay Open");
      await store.setWorkTypePaused("AuthorityRvdm", false, action(5, "maintenance over"));
      assert.deepEqual(await store.pausedWorkTypes(), []);
      assert.equal(await store.queueBatches(2, at(6)), 1);
      assert.equal(await store.operatorRedeliverWebhook(999_999, action(7)), false);
      const audit = await store.listAudit({ limit: 2 });
      assert.deepEqual(audit.map((e) => e.action), ["bot.resume", "bot.pause"]);
      const older = await store.listAudit({ limit: 10, beforeAuditId: audit[1]!.auditId });
      assert.deepEqual(older.map((e) => [e.action, e.reason]), [["bot.pause", "maintenance"], ["workitem.cancel", "customer asked"]]);
    }));

    test("a paused work type: its batches stay Open, its queued items and status requests are not claimed until it is resumed", () => withStore(backend, async (store) => {
      const [filed, queued] = await addItems(store, 1, 2);
      const [theirs] = await addItems(store, 2, 1);
      await queueAll(store, at(1));
      const claim = (seconds: number, limit = 1) => store.claimFilingWork({ owner: "w", now: at(seconds), dueBefore: at(seconds), leaseExpiresAt: at(seconds + 60), limit });
      const polls = (seconds: number) => store.claimStatusRequests({ owner: "w", dueBefore: at(seconds), leaseExpiresAt: at(seconds + 60), limit: 10 });
      assert.deepEqual((await claim(2)).map((i) => i.workItemId), [filed!.workItemId]);
      const submitted = { kind: "submitted" as const, applicationNumber: "A-1", submittedAt: at(3), nextPollAt: at(3) };
      assert.ok(await store.recordItemOutcome({ companyId: 1, workItemId: filed!.workItemId, owner: "w" }, submitted, { now: at(3) }));

      await store.setWorkTypePaused("AuthorityRvdm", true, action(4, "maintenance"));
      const [late] = await addItems(store, 1, 1);
      assert.deepEqual(await store.companiesWithBotWork(), [{ companyId: 1, toQueue: false }, { companyId: 2, toQueue: false }], "deadlines still watched, nothing to take up");
      assert.equal(await queueAll(store, at(5)), 0);
      assert.deepEqual(await claim(6, 10), [], "queued items wait");
      assert.deepEqual(await polls(6), [], "so do status requests");
      assert.equal((await store.getWorkBatch(1, late!.workBatchId))?.status, "Open");

      await store.setWorkTypePaused("AuthorityRvdm", false, action(7, "maintenance over"));
      assert.deepEqual((await polls(8)).map((i) => i.workItemId), [filed!.workItemId]);
      assert.equal(await queueAll(store, at(8)), 1);
      const resumed = await claim(9, 10);
      assert.deepEqual(resumed.map((i) => i.workItemId), [theirs!.workItemId, queued!.workItemId, late!.workItemId], "company 1 was served last: company 2 goes first");
    }));

    test("console at a glance: activity since an instant and per hour, overdue per company, totals capped, a batch's items", () => withStore(backend, async (store) => {
      const hourOf = (iso: string) => new Date(Math.floor(Date.parse(iso) / 3_600_000) * 3_600_000).toISOString();
      await addItems(store, 1, 2);
      await addItems(store, 2, 1);
      const failedAt = at(11);
      await failAll(store, 10);
      const none = { submitted: 0, succeeded: 0, failed: 0, deliveriesFailed: 0, deliveryAttemptsFailed: 0 };
      assert.deepEqual(await store.activitySince(at(0)), { ...none, failed: 3 }, "failed now, over both companies (never filed: claimed and rejected)");
      assert.deepEqual(await store.activitySince(at(12)), none);
      assert.deepEqual(await store.hourlyActivity(at(0)), [{ hour: hourOf(failedAt), ...none, failed: 3 }]);

      const past = new Date(Date.parse(at(0)) - 3_600_000).toISOString();
      await addItems(store, 1, 3, null, [past, past, at(7200)]);
      const overview = await store.companyOverview({ now: at(20) });
      assert.deepEqual(overview.map((company) => [company.companyId, company.overdue]), [[1, 2], [2, 0]]);

      assert.deepEqual(await store.countAllWorkItems({}, 100), { count: 6, exact: true });
      assert.deepEqual(await store.countAllWorkItems({}, 4), { count: 6, exact: true }, "above the cap, a store smaller than the sample is read whole");
      assert.deepEqual(await store.countAllWorkItems({ companyIds: [1], status: "New" }, 100), { count: 3, exact: true });
      assert.deepEqual(await store.countAllWorkItems({ status: "Failed", companyIds: [2] }, 100), { count: 1, exact: true });
      assert.deepEqual(await store.countAllWorkItems({ status: "Failed" }, 0), { count: 3, exact: true }, "from the counters, whatever the cap");
      const [newest] = await store.listAllWorkItems({ limit: 1 });
      const batch = await store.listAllWorkItems({ limit: 10, companyIds: [1], workBatchId: newest!.workBatchId });
      assert.deepEqual(batch.map((item) => item.workBatchId), [newest!.workBatchId, newest!.workBatchId, newest!.workBatchId]);
      assert.deepEqual(await store.countAllWorkItems({ companyIds: [1], workBatchId: newest!.workBatchId }, 100), { count: 3, exact: true });
      assert.equal(await store.operatorStopWebhookDelivery(987_654, action(30)), "notFound");
    }));

    test("listAllWorkItems: across companies, newest first, by filter and cursor", () => withStore(backend, async (store) => {
      await addItems(store, 1, 2);
      await addItems(store, 2, 2);
      const all = await store.listAllWorkItems({ limit: 10 });
      assert.deepEqual(all.map((i) => i.companyId), [2, 2, 1, 1]);
      const page = await store.listAllWorkItems({ limit: 10, after: { order: "newest", workItemId: all[1]!.workItemId } });
      assert.deepEqual(page.map((i) => i.workItemId), all.slice(2).map((i) => i.workItemId));
      assert.equal((await store.listAllWorkItems({ limit: 10, companyIds: [1] })).length, 2);
      assert.equal((await store.listAllWorkItems({ limit: 10, companyIds: [1, 2] })).length, 4);
      assert.equal((await store.listAllWorkItems({ limit: 10, companyIds: [] })).length, 0);
      assert.equal((await store.listAllWorkItems({ limit: 10, status: "Failed" })).length, 0);
      assert.equal((await store.listAllWorkItems({ limit: 10, status: "New", customerReference: "ref-0" })).length, 2);
      await store.recordBotPass({ startedAt: at(1), finishedAt: at(2), submitted: 1, succeeded: 2, failed: 3, retried: 4 });
      await store.recordBotPass({ startedAt: at(3), finishedAt: at(4), submitted: 0, succeeded: 0, failed: 0, retried: 0 });
      assert.equal((await store.lastBotPass())?.startedAt, at(3));
    }));

    test("audit entries written as webhook.redeliver read as delivery.redeliver, the one noun of a delivery's actions", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        await writePastStore(
          location,
          "INSERT INTO audit_log (at, operator_id, operator_email, action, company_id, work_item_id, work_type, delivery_id, reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
          [at(1), "op_1", "ops@example.com", "webhook.redeliver", null, null, null, 7, "written by an earlier release"],
        );
        assert.deepEqual((await store.listAudit({ limit: 5 })).map((entry) => [entry.action, entry.target.deliveryId]), [["delivery.redeliver", 7]]);
      } finally {
        await cleanup();
      }
    });

    test("listAllWorkItems by deadline: the earliest first, ties by id, paged by deadline and id", () => withStore(backend, async (store) => {
      const early = "2030-01-01T11:00:00.000Z";
      const late = "2030-01-03T11:00:00.000Z";
      const [a, b] = await addItems(store, 1, 2, null, [late, early]);
      const [c, d] = await addItems(store, 2, 2, null, [early, late]);
      const order = [b!.workItemId, c!.workItemId, a!.workItemId, d!.workItemId];
      const all = await store.listAllWorkItems({ limit: 10, order: "deadline" });
      assert.deepEqual(all.map((item) => item.workItemId), order);
      const first = await store.listAllWorkItems({ limit: 3, order: "deadline" });
      const last = first.at(-1)!;
      const rest = await store.listAllWorkItems({ limit: 3, order: "deadline", after: { order: "deadline", finished: false, deadlineAt: last.deadlineAt!, workItemId: last.workItemId } });
      assert.deepEqual([...first, ...rest].map((item) => item.workItemId), order, "the second page goes on where the first ended");
      const overdue = await store.listAllWorkItems({ limit: 10, order: "deadline", status: "New", deadlineBefore: "2030-01-02T00:00:00.000Z" });
      assert.deepEqual(overdue.map((item) => item.workItemId), [b!.workItemId, c!.workItemId]);
      assert.deepEqual(await store.countAllWorkItems({ companyIds: [2] }, 100), { count: 2, exact: true });
    }));
  });
}
