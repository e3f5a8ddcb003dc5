/**
 * The store contract (src/store/store.ts), run once per backend on a real database: every
 * method, tenant scoping, the one-Open-batch invariant under concurrency (also across two store
 * instances on one database, as two processes would be), rollover, idempotency outcomes,
 * revocation and the shared signing secret.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { openStore } from "../../src/store/open-store.ts";
import { AlreadyExistsError } from "../../src/store/errors.ts";
import type { AddWorkItemOutcome, AddWorkItemsOutcome, NewWorkItem, NewWorkItems, Store, WorkItemFields } from "../../src/store/store.ts";
import { availableBackends, countRows, writePastStore } from "../helpers/backends.ts";
import { assertJsonViewsMatch } from "../helpers/json-views.ts";
import type { StoreLocation } from "../../src/config.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";

// Every statement these tests make the store send must name its company (checked at the end).
recordStoreStatements();

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

function newItem(companyId: number, overrides: Partial<NewWorkItem> = {}): NewWorkItem {
  return {
    companyId,
    workType: WORK_TYPE_AUTHORITY_RVDM,
    customerReference: "REF",
    documentReference: null,
    webhookUrl: null,
    request: { customerReference: "REF", plannedLoad: 1.5, productName: { sendValue: "X" } },
    batchMaxItems: 1000,
    ...overrides,
  };
}

function newItems(companyId: number, references: string[], overrides: Partial<NewWorkItems> = {}): NewWorkItems {
  const items: WorkItemFields[] = references.map((reference) => ({
    customerReference: reference,
    documentReference: null,
    webhookUrl: null,
    request: { customerReference: reference, plannedLoad: 2 },
    deadlineAt: null,
  }));
  return { companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: 1000, items, ...overrides };
}

const createdMany = (outcome: AddWorkItemsOutcome) => {
  assert.equal(outcome.kind, "created", JSON.stringify(outcome));
  return (outcome as Extract<AddWorkItemsOutcome, { kind: "created" }>).keys;
};

const created = (outcome: AddWorkItemOutcome) => {
  assert.equal(outcome.kind, "created", JSON.stringify(outcome));
  return (outcome as Extract<AddWorkItemOutcome, { kind: "created" }>).key;
};

for (const backend of await availableBackends()) {
  describe(`store contract [${backend.name}]`, () => {
    let store: Store;
    /** A second store on the same database: what another process would see. */
    let twin: Store;
    let cleanup: () => Promise<void>;
    let where: StoreLocation;

    before(async () => {
      const location = await backend.create();
      where = location.location;
      store = await openStore(location.location);
      twin = await openStore(location.location);
      cleanup = async () => {
        await Promise.all([store.close(), twin.close()]);
        await location.cleanup();
      };
      for (const companyId of [1, 2, 3, 4, 5, 6]) await store.createCompany({ companyId, name: `Company ${companyId}` });
    });
    after(() => cleanup());

    test("ping answers and the flags name the backend's abilities", async () => {
      await store.ping();
      assert.equal(store.kind, backend.name);
      assert.equal(store.flags.singleWriter, backend.name === "sqlite");
      assert.equal(store.flags.supportsSkipLocked, backend.name === "postgres");
    });

    test("companies: create with and without an id, refuse a taken id, read back", async () => {
      const explicit = await store.createCompany({ companyId: 4242, name: "Explicit" });
      assert.deepEqual({ ...explicit, createdAt: "" }, { companyId: 4242, name: "Explicit", createdAt: "" });
      assert.match(explicit.createdAt, ISO);
      const next = await store.createCompany({ name: "Next" });
      assert.equal(next.companyId, 4243, "without an id, the next free one");
      await assert.rejects(store.createCompany({ companyId: 4242, name: "Again" }), AlreadyExistsError);
      assert.deepEqual(await twin.getCompany(4242), explicit);
      assert.equal(await store.getCompany(999_999), undefined);
    });

    test("API keys: create, find only within the company, list per company, revoke once", async () => {
      const key = await store.createApiKey({ companyId: 1, keyId: "00000000000000a1", name: "ci", secretHash: "hash-a1" });
      assert.deepEqual({ ...key, createdAt: "" }, { keyId: "00000000000000a1", companyId: 1, name: "ci", createdAt: "", revokedAt: null });
      await store.createApiKey({ companyId: 1, keyId: "00000000000000a2", name: null, secretHash: "hash-a2" });
      await store.createApiKey({ companyId: 2, keyId: "00000000000000b1", name: null, secretHash: "hash-b1" });
      assert.equal((await store.findApiKey(1, "00000000000000a1"))?.secretHash, "hash-a1");
      assert.equal(await store.findApiKey(2, "00000000000000a1"), undefined, "another company's key is not found");
      assert.deepEqual((await store.listApiKeys(1)).map((k) => k.keyId), ["00000000000000a1", "00000000000000a2"]);
      assert.ok((await store.listApiKeys(1)).every((k) => !("secretHash" in k)), "listing never carries hashes");
      assert.deepEqual((await store.listApiKeys(2)).map((k) => k.keyId), ["00000000000000b1"]);

      const revoked = await store.revokeApiKey("00000000000000a1");
      assert.match(revoked?.revokedAt ?? "", ISO);
      assert.equal((await twin.findApiKey(1, "00000000000000a1"))?.revokedAt, revoked?.revokedAt, "the other instance sees it at once");
      assert.equal((await store.revokeApiKey("00000000000000a1"))?.revokedAt, revoked?.revokedAt, "a second revoke keeps the first time");
      assert.equal(await store.revokeApiKey("ffffffffffffffff"), undefined);
      assert.equal((await store.findApiKey(1, "00000000000000a2"))?.revokedAt, null);
    });

    test("webhook secrets are per company; a rotation keeps the previous one until a time, a revoke forgets it", async () => {
      assert.deepEqual(await store.getWebhookSecrets(3), { current: null, previous: null, previousUntil: null });
      assert.equal(await store.ensureWebhookSecret(3, "sealed-three"), "sealed-three");
      assert.deepEqual(await twin.getWebhookSecrets(3), { current: "sealed-three", previous: null, previousUntil: null });
      assert.equal(await store.getWebhookSecrets(424242), undefined);

      assert.equal(await store.rotateWebhookSecret(3, { secret: "sealed-three-b", previousUntil: "2026-11-22T14:00:00.000Z" }), true);
      assert.deepEqual(await twin.getWebhookSecrets(3), { current: "sealed-three-b", previous: "sealed-three", previousUntil: "2026-11-22T14:00:00.000Z" });
      assert.equal(await store.rotateWebhookSecret(3, { secret: "sealed-three-c", previousUntil: null }), true, "no overlap");
      assert.deepEqual(await store.getWebhookSecrets(3), { current: "sealed-three-c", previous: null, previousUntil: null });
      assert.equal(await store.rotateWebhookSecret(3, { secret: "sealed-three-d", previousUntil: "2026-11-22T15:00:00.000Z" }), true);
      assert.equal(await store.revokePreviousWebhookSecret(3), true);
      assert.deepEqual(await store.getWebhookSecrets(3), { current: "sealed-three-d", previous: null, previousUntil: null });
      assert.equal(await store.rotateWebhookSecret(424242, { secret: "x", previousUntil: null }), false);
      assert.equal(await store.revokePreviousWebhookSecret(424242), false);

      assert.equal(await store.rotateWebhookSecret(4, { secret: "sealed-four", previousUntil: "2026-11-22T15:00:00.000Z" }), true);
      assert.deepEqual(await store.getWebhookSecrets(4), { current: "sealed-four", previous: null, previousUntil: null }, "nothing to keep when there was no secret");
    });

    test("secrets stored in plain text are found across companies and replaced only while unchanged", async () => {
      await store.createCompany({ companyId: 731, name: "Plain" });
      await store.createCompany({ companyId: 732, name: "Plain too" });
      await store.ensureWebhookSecret(731, "whsec_plain31");
      await store.ensureWebhookSecret(732, "sealed-32");
      await store.rotateWebhookSecret(732, { secret: "sealed-32b", previousUntil: "2099-01-01T00:00:00.000Z" });
      const found = await store.plaintextWebhookSecrets({ afterCompanyId: 730, limit: 10 });
      assert.deepEqual(found, [{ companyId: 731, current: "whsec_plain31", previous: null }]);
      assert.deepEqual(await store.plaintextWebhookSecrets({ afterCompanyId: 731, limit: 10 }), []);
      await store.replaceStoredWebhookSecrets(731, { current: { from: "whsec_other", to: "sealed-other" }, previous: null });
      assert.equal((await store.getWebhookSecrets(731))?.current, "whsec_plain31", "a secret that changed meanwhile stays");
      await store.replaceStoredWebhookSecrets(731, { current: { from: "whsec_plain31", to: "sealed-31" }, previous: null });
      assert.equal((await twin.getWebhookSecrets(731))?.current, "sealed-31");
      assert.deepEqual(await store.plaintextWebhookSecrets({ afterCompanyId: 0, limit: 100 }), []);
    });

    test("server keys: the first candidate wins for every instance, even when they race; each name is its own", async () => {
      const [a, b] = await Promise.all([store.getOrCreateServerKey("jwt", "candidate-a".repeat(4)), twin.getOrCreateServerKey("jwt", "candidate-b".repeat(4))]);
      assert.equal(a, b);
      assert.ok([`${"candidate-a".repeat(4)}`, `${"candidate-b".repeat(4)}`].includes(a));
      assert.equal(await twin.getOrCreateServerKey("jwt", "candidate-c".repeat(4)), a);
      assert.equal(await twin.getOrCreateServerKey("data-encryption", "candidate-d".repeat(4)), "candidate-d".repeat(4));
      assert.equal(await store.getOrCreateServerKey("data-encryption", "candidate-e".repeat(4)), "candidate-d".repeat(4));
    });

    test("addWorkItem stores a New item in the Open batch; reads are scoped by company", async () => {
      const key = created(await store.addWorkItem(newItem(5, { customerReference: "first", documentReference: "D", webhookUrl: "https://example.org/h", deadlineAt: "2026-12-23T11:00:00.000Z" })));
      const item = await twin.getWorkItem(5, key.workItemId);
      assert.deepEqual({ ...item, createdAt: "", updatedAt: "" }, {
        workItemId: key.workItemId,
        workBatchId: key.workBatchId,
        workType: WORK_TYPE_AUTHORITY_RVDM,
        status: "New",
        kind: "create",
        originalWorkItemId: null,
        revision: 0,
        customerReference: "first",
        documentReference: "D",
        webhookUrl: "https://example.org/h",
        request: { customerReference: "REF", plannedLoad: 1.5, productName: { sendValue: "X" } },
        result: null,
        error: null,
        attempts: 0,
        authority: { applicationNumber: null, registrationNumber: null, submittedAt: null, decidedAt: null },
        deadlineAt: "2026-12-23T11:00:00.000Z",
        createdAt: "",
        updatedAt: "",
        completedAt: null,
      });
      assert.match(item!.createdAt, ISO);
      assert.deepEqual(Object.keys(item!.request), ["customerReference", "plannedLoad", "productName"], "the request keeps its property order");
      const batch = await store.getWorkBatch(5, key.workBatchId);
      assert.equal(batch?.status, "Open");
      assert.equal(batch?.closedAt, null);
      assert.match(batch!.createdAt, ISO);
      assert.deepEqual(batch?.counts, { new: 1, inProgress: 0, submitted: 0, successful: 0, failed: 0, cancelled: 0, withdrawn: 0 });
      assert.equal(await store.getWorkItem(6, key.workItemId), undefined, "another company's item is not found");
      assert.equal(await store.getWorkBatch(6, key.workBatchId), undefined, "another company's batch is not found");
      assert.deepEqual(await store.listWorkItems(6, { limit: 10 }), []);
    });

    test("the views the database writes as JSON are the mapped views, also for a row stored before exportDate was normalised", async () => {
      const companyId = 3;
      await store.addWorkItem(newItem(companyId, { documentReference: "DOC-1", webhookUrl: "https://hooks.example/a" }));
      const plain = created(await store.addWorkItem(newItem(companyId, { request: { customerReference: "É \"quoted\" ✓", exportDate: "2026-12-01T08:00:00.000Z", plannedLoad: 12 } })));
      const old = created(await store.addWorkItem(newItem(companyId)));
      const cancelled = created(await store.addWorkItem(newItem(companyId)));
      await store.cancelWorkItem(companyId, cancelled.workItemId, new Date().toISOString());
      const oldRequest = JSON.stringify({ customerReference: "REF", exportDate: "2026-12-01T09:00:00+01:00", plannedLoad: 1.5 });
      assert.equal(await writePastStore(where, "UPDATE work_items SET request = $1 WHERE company_id = $2 AND work_item_id = $3", [oldRequest, companyId, old.workItemId]), 1);
      assert.equal(await assertJsonViewsMatch(store, companyId), 4);
      const oldView = JSON.parse((await store.getWorkItemJson(companyId, old.workItemId))!) as { request: { exportDate: string } };
      assert.equal(oldView.request.exportDate, "2026-12-01T08:00:00.000Z", "the old row is answered normalised");
      assert.equal(JSON.parse((await store.getWorkItemJson(companyId, plain.workItemId))!).request.customerReference, 'É "quoted" ✓');
      assert.equal(await store.getWorkItemJson(companyId + 1, plain.workItemId), undefined, "another company's item is not found");
      assert.deepEqual(await store.listWorkItemsJson(companyId, { limit: 2, beforeWorkItemId: old.workItemId }).then((page) => page.map((item) => item.workItemId)), [plain.workItemId, plain.workItemId - 1]);
    });

    test("listWorkItems: newest first, keyset, every filter, limit", async () => {
      const keys = [];
      for (const reference of ["a", "b", "a", "c", "a"]) keys.push(created(await store.addWorkItem(newItem(6, { customerReference: reference }))));
      const ids = keys.map((k) => k.workItemId);
      assert.deepEqual((await store.listWorkItems(6, { limit: 10 })).map((i) => i.workItemId), [...ids].reverse());
      assert.deepEqual((await store.listWorkItems(6, { limit: 2 })).map((i) => i.workItemId), [ids[4], ids[3]]);
      assert.deepEqual((await store.listWorkItems(6, { limit: 2, beforeWorkItemId: ids[3] })).map((i) => i.workItemId), [ids[2], ids[1]]);
      assert.deepEqual((await store.listWorkItems(6, { limit: 10, customerReference: "a" })).map((i) => i.workItemId), [ids[4], ids[2], ids[0]]);
      assert.deepEqual(
        (await store.listWorkItems(6, { limit: 10, customerReference: "a", beforeWorkItemId: ids[4], status: "New", workBatchId: keys[0]!.workBatchId })).map((i) => i.workItemId),
        [ids[2], ids[0]],
      );
      assert.deepEqual(await store.listWorkItems(6, { limit: 10, status: "Cancelled" }), []);
      assert.deepEqual(await store.listWorkItems(6, { limit: 10, workBatchId: keys[0]!.workBatchId + 1_000_000 }), []);
    });

    test("rollover: the full batch closes and a new one opens at batchMaxItems", async () => {
      await store.createCompany({ companyId: 20, name: "Rollover" });
      const keys = [];
      for (let i = 0; i < 5; i++) keys.push(created(await store.addWorkItem(newItem(20, { batchMaxItems: 2 }))));
      const batchIds = [...new Set(keys.map((k) => k.workBatchId))];
      assert.equal(batchIds.length, 3);
      const batches = await Promise.all(batchIds.map((id) => store.getWorkBatch(20, id)));
      assert.deepEqual(batches.map((b) => [b?.status, b?.counts.new]), [["Closed", 2], ["Closed", 2], ["Open", 1]]);
      assert.match(batches[0]!.closedAt ?? "", ISO);
    });

    test("one Open batch per company under concurrency across two instances; every item stored once", async () => {
      for (const companyId of [30, 31]) await store.createCompany({ companyId, name: `Race ${companyId}` });
      const outcomes = await Promise.all(
        Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? store : twin).addWorkItem(newItem(30 + (i % 3 === 0 ? 1 : 0), { customerReference: `r${i}`, batchMaxItems: 7 }))),
      );
      for (const companyId of [30, 31]) {
        const mine = outcomes.filter((_, i) => 30 + (i % 3 === 0 ? 1 : 0) === companyId).map(created);
        assert.equal(new Set(mine.map((k) => k.workItemId)).size, mine.length, "every item has its own id");
        const batches = await Promise.all([...new Set(mine.map((k) => k.workBatchId))].map((id) => store.getWorkBatch(companyId, id)));
        const open = batches.filter((b) => b?.status === "Open");
        assert.equal(open.length, 1, `company ${companyId} has exactly one Open batch`);
        assert.ok(batches.filter((b) => b?.status === "Closed").every((b) => b?.counts.new === 7), "closed batches are exactly full");
        assert.equal(batches.reduce((sum, b) => sum + (b?.counts.new ?? 0), 0), mine.length);
        assert.equal((await store.listWorkItems(companyId, { limit: 200 })).length, Math.min(mine.length, 200));
      }
    });

    test("one item's failure fails only its own call, not its group", async () => {
      // 888_893 ≡ 5 modulo 1–4, 6 and 12, so the three calls share a group however many lanes there are.
      const calls = [newItem(5, { customerReference: "ok-1" }), newItem(888_893, { customerReference: "no such company" }), newItem(5, { customerReference: "ok-2" })];
      const results = await Promise.allSettled(calls.map((call) => store.addWorkItem(call)));
      assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
      assert.equal((await store.listWorkItems(5, { limit: 10, customerReference: "ok-2" })).length, 1);
      assert.equal((await store.listWorkItems(888_893, { limit: 10 })).length, 0);
    });

    test("idempotency: replay, reuse with another body, per company, and expiry", async () => {
      const idem = (key: string, requestHash: string, retentionSeconds = 86_400) => ({ key, requestHash, retentionSeconds });
      const first = created(await store.addWorkItem(newItem(4, { idempotency: idem("k1", "h1") })));
      const rows = await countRows(where);
      assert.deepEqual(await twin.addWorkItem(newItem(4, { idempotency: idem("k1", "h1") })), { kind: "replayed", key: first });
      assert.deepEqual(await store.addWorkItem(newItem(4, { idempotency: idem("k1", "h2") })), { kind: "keyReused" });
      assert.deepEqual(await countRows(where), rows, "neither a replay nor a reuse stores anything");
      created(await store.addWorkItem(newItem(3, { idempotency: idem("k1", "h2") })));

      // Expired (retention 0): the key is free again and now names the new item.
      const renewed = created(await store.addWorkItem(newItem(4, { idempotency: idem("k1", "h9", 0) })));
      assert.notEqual(renewed.workItemId, first.workItemId);
      assert.deepEqual(await store.addWorkItem(newItem(4, { idempotency: idem("k1", "h9") })), { kind: "replayed", key: renewed });
    });

    test("idempotency raced from two instances yields exactly one item", async () => {
      for (const round of [1, 2, 3]) {
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? store : twin).addWorkItem(newItem(2, { customerReference: `race-${round}`, idempotency: { key: `race-${round}`, requestHash: "same", retentionSeconds: 60 } })),
          ),
        );
        assert.equal(outcomes.filter((o) => o.kind === "created").length, 1, JSON.stringify(outcomes));
        assert.ok(outcomes.every((o) => o.kind === "created" || o.kind === "replayed"));
        assert.equal(new Set(outcomes.map((o) => ("key" in o ? o.key.workItemId : 0))).size, 1);
        assert.equal((await store.listWorkItems(2, { limit: 20, customerReference: `race-${round}` })).length, 1);
      }
    });

    test("addWorkItems stores every item in order, New, filling the Open batch and rolling over", async () => {
      await store.createCompany({ companyId: 40, name: "Bulk" });
      const first = created(await store.addWorkItem(newItem(40, { customerReference: "before", batchMaxItems: 3 })));
      const references = ["b0", "b1", "b2", "b3", "b4", "b5", "b6"];
      const keys = createdMany(await store.addWorkItems(newItems(40, references, { batchMaxItems: 3 })));
      assert.equal(keys.length, 7);
      assert.deepEqual(keys.map((k) => k.workItemId), [...keys.map((k) => k.workItemId)].sort((a, b) => a - b), "ids ascend in request order");
      const batchIds = [...new Set(keys.map((k) => k.workBatchId))];
      assert.equal(batchIds[0], first.workBatchId, "the first items fill the Open batch");
      assert.deepEqual(batchIds.map((id) => keys.filter((k) => k.workBatchId === id).length), [2, 3, 2], "then it rolls over, twice");
      const batches = await Promise.all(batchIds.map((id) => twin.getWorkBatch(40, id)));
      assert.deepEqual(batches.map((b) => [b?.status, b?.counts.new]), [["Closed", 3], ["Closed", 3], ["Open", 2]]);
      for (const [index, key] of keys.entries()) {
        const item = await twin.getWorkItem(40, key.workItemId);
        assert.equal(item?.customerReference, references[index]);
        assert.equal(item?.status, "New");
        assert.equal(item?.workBatchId, key.workBatchId);
      }
      const after = created(await store.addWorkItem(newItem(40, { batchMaxItems: 3 })));
      assert.equal(after.workBatchId, batchIds[2], "a single add after it goes on in the same Open batch");
      assert.equal(await store.getWorkItem(41, keys[0]!.workItemId), undefined, "another company's id is not found");
    });

    test("addWorkItems: all or nothing; a failing bulk fails alone, next to single adds", async () => {
      const rows = await countRows(where);
      await assert.rejects(store.addWorkItems(newItems(888_893, ["x", "y"])));
      assert.deepEqual(await countRows(where), rows, "a failed bulk stores nothing");
      // 888_893 ≡ 5 modulo the lane counts (see above): the calls share a lane and a writer group.
      const calls = [store.addWorkItem(newItem(5, { customerReference: "beside-1" })), store.addWorkItems(newItems(888_893, ["z"])), store.addWorkItems(newItems(5, ["beside-2", "beside-3"]))];
      const results = await Promise.allSettled(calls);
      assert.deepEqual(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
      for (const reference of ["beside-1", "beside-2", "beside-3"]) assert.equal((await store.listWorkItems(5, { limit: 10, customerReference: reference })).length, 1, reference);
    });

    test("addWorkItems idempotency: the whole answer replays; another body, or a single add's key, is keyReused", async () => {
      await store.createCompany({ companyId: 42, name: "Bulk keys" });
      const refused = [{ index: 1, errors: { plannedLoad: ["must be ≥ 0"] } }];
      const idem = (key: string, requestHash: string, retentionSeconds = 86_400) => ({ key, requestHash, retentionSeconds, refused });
      const keys = createdMany(await store.addWorkItems(newItems(42, ["k0", "k2"], { idempotency: idem("bulk-1", "bh1") })));
      const rows = await countRows(where);
      assert.deepEqual(await twin.addWorkItems(newItems(42, ["k0", "k2"], { idempotency: idem("bulk-1", "bh1") })), { kind: "replayed", keys, refused });
      assert.deepEqual(await store.addWorkItems(newItems(42, ["other"], { idempotency: idem("bulk-1", "bh2") })), { kind: "keyReused" });
      assert.deepEqual(await store.addWorkItem(newItem(42, { idempotency: { key: "bulk-1", requestHash: "bh1", retentionSeconds: 86_400 } })), { kind: "keyReused" });
      assert.deepEqual(await countRows(where), rows, "neither a replay nor a reuse stores anything");

      created(await store.addWorkItem(newItem(42, { idempotency: { key: "single-1", requestHash: "sh1", retentionSeconds: 86_400 } })));
      assert.deepEqual(await store.addWorkItems(newItems(42, ["x"], { idempotency: idem("single-1", "sh1") })), { kind: "keyReused" });

      // Nothing to store but the answer (every item refused): the key keeps it.
      assert.deepEqual(await store.addWorkItems(newItems(42, [], { idempotency: idem("bulk-empty", "bh3") })), { kind: "created", keys: [] });
      assert.deepEqual(await twin.addWorkItems(newItems(42, [], { idempotency: idem("bulk-empty", "bh3") })), { kind: "replayed", keys: [], refused });

      // Expired (retention 0): the key is free again.
      const renewed = createdMany(await store.addWorkItems(newItems(42, ["again"], { idempotency: idem("bulk-1", "bh9", 0) })));
      assert.notDeepEqual(renewed, keys);
      assert.deepEqual(await store.addWorkItems(newItems(42, ["again"], { idempotency: idem("bulk-1", "bh9") })), { kind: "replayed", keys: renewed, refused });
    });

    test("addWorkItems idempotency raced from two instances stores the items once", async () => {
      await store.createCompany({ companyId: 43, name: "Bulk race" });
      for (const round of [1, 2]) {
        const references = [`race-${round}-a`, `race-${round}-b`, `race-${round}-c`];
        const idempotency = { key: `bulk-race-${round}`, requestHash: "same", retentionSeconds: 60, refused: [] };
        const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? store : twin).addWorkItems(newItems(43, references, { idempotency }))));
        assert.equal(outcomes.filter((o) => o.kind === "created").length, 1, JSON.stringify(outcomes));
        assert.ok(outcomes.every((o) => o.kind === "created" || o.kind === "replayed"));
        assert.equal(new Set(outcomes.map((o) => JSON.stringify("keys" in o ? o.keys : []))).size, 1, "every answer names the same items");
        for (const reference of references) assert.equal((await store.listWorkItems(43, { limit: 20, customerReference: reference })).length, 1);
      }
    });

    test("bulk and single adds of one company racing from two instances keep one Open batch, batches exactly full", async () => {
      await store.createCompany({ companyId: 44, name: "Bulk mix" });
      const calls = Array.from({ length: 40 }, (_, i) => {
        const on = i % 2 === 0 ? store : twin;
        return i % 4 === 0
          ? on.addWorkItems(newItems(44, Array.from({ length: 9 }, (_, j) => `mix-${i}-${j}`), { batchMaxItems: 7 })).then(createdMany)
          : on.addWorkItem(newItem(44, { customerReference: `mix-${i}`, batchMaxItems: 7 })).then((outcome) => [created(outcome)]);
      });
      const keys = (await Promise.all(calls)).flat();
      assert.equal(keys.length, 10 * 9 + 30);
      assert.equal(new Set(keys.map((k) => k.workItemId)).size, keys.length);
      const batches = await Promise.all([...new Set(keys.map((k) => k.workBatchId))].map((id) => store.getWorkBatch(44, id)));
      assert.equal(batches.filter((b) => b?.status === "Open").length, 1);
      assert.ok(batches.filter((b) => b?.status === "Closed").every((b) => b?.counts.new === 7), "closed batches are exactly full");
    });

    test("what the tests count is there: every table", async () => {
      const counts = await countRows(where);
      assert.ok(counts.companies >= 10 && counts.apiKeys === 3 && counts.workBatches > 0 && counts.workItems > 300 && counts.idempotencyKeys >= 3, JSON.stringify(counts));
    });
  });
}
