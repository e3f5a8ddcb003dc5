/**
 * A company's erase in its phases (SPEC §22), driven step by step on both stores with a clock of
 * the test's: keys revoked first, then New items cancelled and the company out of the filing
 * queue, its calls in flight waited for (an item given back to New meanwhile is cancelled too),
 * and only then its rows, in bounded steps; one audit entry at the end. No key can be made while
 * it runs. Every statement names its company (the recorder checks at the end).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CompanyBeingErasedError, createKey } from "../../src/admin/admin.ts";
import { advanceCompanyErasure, type ErasureProgress } from "../../src/admin/company-erasure.ts";
import type { Store } from "../../src/store/store.ts";
import { availableBackends, openFreshStore, queryRows } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { addItems } from "../helpers/store-items.ts";
import { queueAll } from "../helpers/sweeps.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

recordStoreStatements();

const action = { operator: { operatorId: "op_1", email: "ops@example.com" }, reason: "the company left", at: new Date().toISOString() };

const statuses = async (store: Store, companyId: number) =>
  (await store.listWorkItems(companyId, { limit: 100 })).map((item) => item.status).sort().join(",");

for (const backend of await availableBackends()) {
  describe(`a company's erase, phase by phase [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("keys, then New items and the queue, then calls in flight, then rows in bounded steps, and one audit entry", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        const key = await createKey(store, { companyId: 7 });
        await createKey(store, { companyId: 8 });
        await addItems(store, 7, 5);
        let now = Date.now();
        const clock = () => new Date(now);
        await queueAll(store, clock().toISOString());
        const claimed = await store.claimFilingWork({ owner: "w", now: clock().toISOString(), dueBefore: clock().toISOString(), leaseExpiresAt: new Date(now + 60_000).toISOString(), limit: 2 });
        assert.deepEqual(claimed.map((item) => item.companyId), [7, 7], "two of company 7's items are being filed");
        await addItems(store, 8, 2);
        const theirs = await statuses(store, 8);

        assert.equal((await store.beginCompanyErasure(7, action)).kind, "begun");
        assert.equal((await store.beginCompanyErasure(7, { ...action, reason: "again" })).kind, "resumed");
        assert.equal((await store.beginCompanyErasure(9, action)).kind, "notFound");
        await assert.rejects(createKey(store, { companyId: 7 }), CompanyBeingErasedError);
        assert.deepEqual((await store.companyErasures()).map((e) => [e.companyId, e.phase, e.reason]), [[7, "revoking", "the company left"]]);

        const seen: ErasureProgress[] = [];
        const advance = (budgetMs = 10_000, stepRows?: number) =>
          advanceCompanyErasure(store, 7, { budgetMs, clock, onProgress: (p) => seen.push(p), ...(stepRows ? { stepRows } : {}) });
        assert.equal((await advance()).kind, "waiting");
        assert.notEqual((await store.findApiKey(7, key.keyId))?.revokedAt, null, "its keys first");
        assert.equal(await statuses(store, 7), "Cancelled,Cancelled,Cancelled,InProgress,InProgress", "its New items cancelled; the two in flight go on");
        assert.deepEqual(await queryRows(location, "SELECT work_type FROM filing_lanes WHERE company_id = 7"), [], "out of the filing queue");
        assert.equal((await store.companyErasure(7))?.phase, "draining");

        now += 10_000;
        assert.equal((await advance()).kind, "waiting", "the keys are refused everywhere now, but two calls are in flight");
        assert.deepEqual(seen.at(-1), { kind: "draining", callsInFlight: 2, keysRefusedAt: new Date(Date.parse((await store.companyErasure(7))!.keysRevokedAt!) + 5000).toISOString() });
        // One call ends in a retry (back to New), the other is given back: both end, and the next round cancels them.
        const [first, second] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
        assert.ok(await store.recordItemOutcome({ companyId: 7, workItemId: first.workItemId, owner: "w" }, { kind: "retried", nextAttemptAt: clock().toISOString(), lastError: "x" }, { now: clock().toISOString() }));
        assert.equal(await store.releaseItems([{ companyId: 7, workItemId: second.workItemId, owner: "w" }], { now: clock().toISOString(), dueAt: clock().toISOString(), reason: "stopping" }), 1);

        assert.equal((await advance(0, 2)).kind, "deleting", "a budget spent hands back between two steps");
        assert.equal((await store.companyErasure(7))?.items, 5, "every item counted as deleting began");
        const kinds = seen.map((p) => p.kind);
        assert.ok(kinds.indexOf("keysRevoked") < kinds.indexOf("cancelled") && kinds.lastIndexOf("cancelled") < kinds.indexOf("deleting"), kinds.join(" "));
        assert.ok(seen.filter((p) => p.kind === "deleted").every((p) => p.kind === "deleted" && p.rows <= 2), "bounded steps");

        const end = await advance();
        assert.equal(end.kind, "erased");
        assert.deepEqual(end.kind === "erased" && { ...end.erased, erasedAt: "" }, { companyId: 7, items: 5, erasedAt: "" });
        assert.equal((await advance()).kind, "none", "nothing under way any more");
        assert.equal(await store.getCompany(7), undefined);
        assert.equal(await statuses(store, 8), theirs, "company 8 untouched");
        const audit = await store.listAudit({ limit: 10 });
        assert.deepEqual(audit.map((e) => [e.action, e.target.companyId, e.items, e.reason, e.operator.email]), [["company.erased", 7, 5, "the company left", "ops@example.com"]]);
        assert.deepEqual(await store.lastCompanyErasure(7), { companyId: 7, items: 5, erasedAt: audit[0]!.at });
        assert.deepEqual(await store.companyErasures(), []);
      } finally {
        await cleanup();
      }
    });
  });
}
