/**
 * AddWorkItemCreateBulk (SPEC §11.1) on each store: results in request order, rollover across
 * batches, mixed valid and invalid items, allOrNothing, the 1–1,000 items rule, the body limit,
 * the Idempotency-Key of the whole request, tenancy, the per-item rate limit with its debt, and
 * that a refused request stores nothing and no body makes a 500.
 */
import assert from "node:assert/strict";
import type { LightMyRequestResponse } from "fastify";
import { after, before, describe, test } from "node:test";
import { assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";

const URL = "/api/AuthorityRvdm/AddWorkItemCreateBulk";
const SINGLE = "/api/AuthorityRvdm/AddWorkItemCreate";
const PING = "/api/AuthorityRvdm/Ping";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Result = { index: number; workBatchId?: number; workItemId?: number; status?: number; errors?: Record<string, string[]> };
const resultsOf = (response: LightMyRequestResponse) => response.json<{ results: Result[] }>().results;
const items = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => validWorkItem({ customerReference: `${prefix}-${i}` }));

for (const backend of await availableBackends()) {
  describe(`AddWorkItemCreateBulk [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(backend, { BATCH_MAX_ITEMS: "4", MAX_BULK_BODY_BYTES: "500000" });
      tenant = await t.tenant(2101);
    });
    after(() => t.close());

    const bulk = (body: unknown, headers: Record<string, string> = {}, token = tenant.token) =>
      t.app.inject({ method: "POST", url: URL, headers: { ...bearer(token), "content-type": "application/json", ...headers }, payload: JSON.stringify(body) });
    const stored = async (companyId: number, reference: string) => t.store.listWorkItems(companyId, { customerReference: reference, limit: 10 });

    test("is guarded", () => assertRouteIsGuarded(t, tenant, { method: "POST", url: URL, payload: { items: [validWorkItem()] } }));

    test("stores every item New, answers in request order, and rolls over across batches", async () => {
      const company = await t.tenant(2102);
      const first = await t.app.inject({ method: "POST", url: SINGLE, headers: bearer(company.token), payload: validWorkItem({ customerReference: "single" }) });
      const openBatch = first.json<{ workBatchId: number }>().workBatchId;
      const response = await bulk({ items: items("roll", 10) }, {}, company.token);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers["idempotency-replayed"], undefined);
      const results = resultsOf(response);
      assert.deepEqual(results.map((r) => r.index), [...Array(10).keys()]);
      const ids = results.map((r) => r.workItemId!);
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "ids ascend in request order");
      const batchIds = [...new Set(results.map((r) => r.workBatchId!))];
      assert.equal(batchIds[0], openBatch, "the first items fill the company's Open batch");
      assert.deepEqual(batchIds.map((id) => results.filter((r) => r.workBatchId === id).length), [3, 4, 3], "then the bulk spans two more batches");
      const batches = await Promise.all(batchIds.map((id) => t.app.inject({ url: `/api/AuthorityRvdm/WorkBatch/${id}`, headers: bearer(company.token) })));
      assert.deepEqual(batches.map((b) => [b.json<{ status: string }>().status, b.json<{ counts: { new: number } }>().counts.new]), [["Closed", 4], ["Closed", 4], ["Open", 3]]);
      for (const [index, result] of results.entries()) {
        const item = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${result.workItemId}`, headers: bearer(company.token) });
        assert.equal(item.statusCode, 200);
        const view = item.json<{ customerReference: string; status: string; workBatchId: number; deadlineAt: string | null; request: { exportDate: string } }>();
        assert.equal(view.customerReference, `roll-${index}`);
        assert.equal(view.status, "New");
        assert.equal(view.workBatchId, result.workBatchId);
        assert.match(view.request.exportDate, /Z$/, "normalised as a single add is");
        assert.ok(view.deadlineAt, "each item gets its filing deadline");
      }
      const other = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${ids[0]}`, headers: bearer(tenant.token) });
      assert.equal(other.statusCode, 404, "another company does not see the items");
    });

    test("without allOrNothing the valid items are stored and each invalid one is reported in its place", async () => {
      const before = await t.countRows();
      const body = {
        items: [
          validWorkItem({ customerReference: "mixed-0" }),
          validWorkItem({ customerReference: "mixed-1", plannedLoad: -1 }),
          validWorkItem({ customerReference: "mixed-2" }),
          "not an object",
          validWorkItem({ customerReference: "mixed-4", webhookUrl: "http://127.0.0.1/hook" }),
          { customerReference: "mixed-5" },
          validWorkItem({ customerReference: "mixed-6", PlannedLoad: "7.5" }),
        ],
      };
      delete (body.items[6] as Record<string, unknown>).plannedLoad;
      const response = await bulk(body);
      assert.equal(response.statusCode, 200, response.body);
      const results = resultsOf(response);
      assert.deepEqual(results.map((r) => r.index), [0, 1, 2, 3, 4, 5, 6]);
      assert.deepEqual(results.map((r) => (r.workItemId ? "stored" : r.status)), ["stored", 400, "stored", 400, 400, 400, "stored"]);
      assert.deepEqual(Object.keys(results[1]!.errors!), ["plannedLoad"]);
      assert.deepEqual(Object.keys(results[3]!.errors!), ["$"]);
      assert.deepEqual(Object.keys(results[4]!.errors!), ["webhookUrl"], "the webhook address guard, as for a single add");
      assert.ok(results[5]!.errors!.productName && results[5]!.errors!.plannedLoad, "every problem of an item at once");
      for (const reference of ["mixed-0", "mixed-2", "mixed-6"]) assert.equal((await stored(tenant.companyId, reference)).length, 1, reference);
      for (const reference of ["mixed-1", "mixed-4", "mixed-5"]) assert.equal((await stored(tenant.companyId, reference)).length, 0, reference);
      assert.equal((await stored(tenant.companyId, "mixed-6"))[0]!.request.plannedLoad, 7.5, "names and numbers bind as for a single add");
      assert.equal((await t.countRows()).workItems, before.workItems + 3);
    });

    test("allOrNothing: one invalid item is a 400 naming items[i].field, and nothing is stored", async () => {
      const before = await t.countRows();
      const response = await bulk({ allOrNothing: true, items: [validWorkItem({ customerReference: "aon-0" }), validWorkItem({ plannedLoad: -1 }), 42, validWorkItem()] });
      assert.equal(response.statusCode, 400);
      assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
      const body = problem(response);
      assert.deepEqual(Object.keys(body.errors ?? {}).sort(), ["items[1].plannedLoad", "items[2]"]);
      assert.deepEqual(await t.countRows(), before);
      assert.equal((await stored(tenant.companyId, "aon-0")).length, 0);

      const valid = await bulk({ AllOrNothing: true, Items: items("aon-ok", 3) });
      assert.equal(valid.statusCode, 200, valid.body);
      assert.equal(resultsOf(valid).filter((r) => r.workItemId).length, 3);
    });

    test("0 items, more than 1,000 items, or no items list: 400, nothing stored", async () => {
      const before = await t.countRows();
      const tiny = { customerReference: "x" };
      for (const [name, body] of [
        ["0 items", { items: [] }],
        ["1,001 items", { items: Array.from({ length: 1001 }, () => tiny) }],
        ["no items", { allOrNothing: false }],
        ["items not a list", { items: validWorkItem() }],
        ["unknown property", { items: [validWorkItem()], extra: 1 }],
        ["allOrNothing not a boolean", { items: [validWorkItem()], allOrNothing: "yes" }],
        ["a list as the body", [validWorkItem()]],
      ] as const) {
        const response = await bulk(body);
        assert.equal(response.statusCode, 400, `${name}: ${response.body}`);
        assert.ok(problem(response).errors, name);
      }
      assert.deepEqual(problem(await bulk({ items: [] })).errors, { items: ["must have at least 1 item"] });
      assert.deepEqual(problem(await bulk({ items: Array.from({ length: 1001 }, () => tiny) })).errors, { items: ["must have at most 1000 items"] });
      assert.deepEqual(await t.countRows(), before);
    });

    test("1,000 items are taken; a body over MAX_BULK_BODY_BYTES is a 413 problem, nothing stored", async () => {
      const company = await t.tenant(2103);
      const before = await t.countRows();
      // MAX_BULK_BODY_BYTES is 500,000 here: 1,000 items of ~420 bytes fit, of ~620 bytes do not.
      const wordy = Array.from({ length: 1000 }, (_, i) => validWorkItem({ customerReference: `too-big-${i}`, productName: { sendValue: "X", documentValue: "y".repeat(200) } }));
      const over = await bulk({ items: wordy }, {}, company.token);
      assert.equal(over.statusCode, 413, over.body.slice(0, 200));
      assert.match(String(over.headers["content-type"]), /^application\/problem\+json/);
      assert.equal(problem(over).status, 413);
      assert.deepEqual(await t.countRows(), before);

      const thousand = { items: items("thousand", 1000) };
      assert.ok(JSON.stringify(thousand).length > 65_536, "far more than the single add's body limit");
      const response = await bulk(thousand, {}, company.token);
      assert.equal(response.statusCode, 200, response.body.slice(0, 300));
      const results = resultsOf(response);
      assert.equal(results.filter((r) => r.workItemId).length, 1000);
      assert.equal(new Set(results.map((r) => r.workBatchId)).size, 250, "BATCH_MAX_ITEMS is 4 here");
      assert.equal((await t.countRows()).workItems, before.workItems + 1000);
    });

    test("Idempotency-Key: the same body replays the whole first answer; another body is 422; nothing new is stored", async () => {
      const body = { items: [validWorkItem({ customerReference: "idem-0" }), validWorkItem({ plannedLoad: -3 }), validWorkItem({ customerReference: "idem-2" })] };
      const first = await bulk(body, { "idempotency-key": "bulk-key-1" });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.headers["idempotency-replayed"], undefined);
      const rows = await t.countRows();
      const reordered = { items: body.items.map((item) => (typeof item === "object" ? Object.fromEntries(Object.entries(item).reverse()) : item)) };
      const again = await bulk(reordered, { "idempotency-key": "bulk-key-1" });
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.headers["idempotency-replayed"], "true");
      assert.deepEqual(again.json(), first.json(), "the first answer, refused item included");
      assert.deepEqual(await t.countRows(), rows);

      const changed = await bulk({ items: [validWorkItem({ customerReference: "idem-other" })] }, { "idempotency-key": "bulk-key-1" });
      assert.equal(changed.statusCode, 422);
      assert.equal(problem(changed).type, "urn:work-item-api:problem:idempotency-key-reused");
      const spelledOut = await bulk({ ...body, allOrNothing: false }, { "idempotency-key": "bulk-key-1" });
      assert.equal(spelledOut.headers["idempotency-replayed"], "true", "allOrNothing: false is the default, the same request");
      const valid = { items: [validWorkItem({ customerReference: "idem-valid" })] };
      assert.equal((await bulk(valid, { "idempotency-key": "bulk-key-2" })).statusCode, 200);
      const rowsNow = await t.countRows();
      const flagged = await bulk({ ...valid, allOrNothing: true }, { "idempotency-key": "bulk-key-2" });
      assert.equal(flagged.statusCode, 422, "allOrNothing is part of the request");
      assert.deepEqual(await t.countRows(), rowsNow);

      // One namespace of keys with the single add.
      const single = await t.app.inject({ method: "POST", url: SINGLE, headers: { ...bearer(tenant.token), "idempotency-key": "shared-key" }, payload: validWorkItem({ customerReference: "idem-single" }) });
      assert.equal(single.statusCode, 200);
      assert.equal((await bulk({ items: [validWorkItem({ customerReference: "idem-single" })] }, { "idempotency-key": "shared-key" })).statusCode, 422);
      const bulkFirst = await t.app.inject({ method: "POST", url: SINGLE, headers: { ...bearer(tenant.token), "idempotency-key": "bulk-key-1" }, payload: validWorkItem({ customerReference: "idem-0" }) });
      assert.equal(bulkFirst.statusCode, 422);

      // Every item refused: the answer is still kept under the key.
      const refusedOnly = { items: [validWorkItem({ plannedLoad: -1 })] };
      const none = await bulk(refusedOnly, { "idempotency-key": "bulk-key-none" });
      assert.equal(none.statusCode, 200);
      const noneAgain = await bulk(refusedOnly, { "idempotency-key": "bulk-key-none" });
      assert.equal(noneAgain.headers["idempotency-replayed"], "true");
      assert.deepEqual(noneAgain.json(), none.json());

      const other = await t.tenant(2104);
      const otherCompany = await bulk(body, { "idempotency-key": "bulk-key-1" }, other.token);
      assert.equal(otherCompany.headers["idempotency-replayed"], undefined, "another company's keys are its own");
    });

    test("Idempotency-Key: concurrent duplicates get 409 or the replay, and the items are stored once", async () => {
      const body = { items: items("race", 5) };
      const responses = await Promise.all([1, 2, 3, 4].map(() => bulk(body, { "idempotency-key": "bulk-race" })));
      assert.ok(responses.every((r) => r.statusCode === 200 || r.statusCode === 409), responses.map((r) => r.statusCode).join());
      const ok = responses.filter((r) => r.statusCode === 200);
      assert.ok(ok.length >= 1);
      assert.equal(new Set(ok.map((r) => r.body)).size, 1);
      for (const item of body.items) assert.equal((await stored(tenant.companyId, String(item.customerReference))).length, 1);
      const conflict = responses.find((r) => r.statusCode === 409);
      if (conflict) assert.equal(conflict.headers["retry-after"], "1");
    });

    test("a body nested 20,000 levels deep is a 400 with or without an Idempotency-Key; one within the bound is answered item by item", async () => {
      const before = await t.countRows();
      // Written as text: JSON.stringify itself runs out of stack on such a value.
      const deep = (levels: number) => `${JSON.stringify(validWorkItem({ customerReference: `deep-${levels}` })).slice(0, -1)},"nested":${"[".repeat(levels)}${"]".repeat(levels)}}`;
      for (const url of [URL, SINGLE]) {
        for (const headers of [{}, { "idempotency-key": `deep-${url}` }]) {
          const payload = url === URL ? `{"items":[${deep(20_000)}]}` : deep(20_000);
          const response = await t.app.inject({ method: "POST", url, headers: { ...bearer(tenant.token), "content-type": "application/json", ...headers }, payload });
          assert.equal(response.statusCode, 400, `${url} ${JSON.stringify(headers)}: ${response.body.slice(0, 200)}`);
          assert.match(String(problem(response).errors?.$), /more than 64 levels deep/);
        }
      }
      assert.deepEqual(await t.countRows(), before, "nothing stored");
      // 60 levels inside an item of a bulk: the body is read, the item refused in its place, with the key as without it.
      const withKey = await bulk(JSON.parse(`{"items":[${deep(60)},${JSON.stringify(validWorkItem({ customerReference: "beside-deep" }))}]}`), { "idempotency-key": "deep-within-bound" });
      assert.equal(withKey.statusCode, 200, withKey.body.slice(0, 200));
      assert.deepEqual(resultsOf(withKey).map((r) => r.status ?? 200), [400, 200]);
    });

    test("garbage bodies and headers never make a 500, and store nothing", async () => {
      const before = await t.countRows();
      const payloads = [
        "", "{", "null", "[]", '"x"', "1e999", '{"items": null}', '{"items": "x"}', '{"items": {"0": {}}}', '{"items": [[[[[[]]]]]]}',
        '{"__proto__": {"items": []}}', '{"items": [{"__proto__": {"plannedLoad": 1}}]}', '{"items": [{"constructor": {"prototype": {}}}]}',
        `{"items": [${'{"a":'.repeat(2000)}1${"}".repeat(2000)}]}`, '{"items": [1, "s", null, true, {}, []], "allOrNothing": true}',
        '{"items": [{"customerReference": "\\ud800"}]}', '{"items":[{}],"items":[]}',
      ];
      for (const payload of payloads) {
        const response = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload });
        assert.ok(response.statusCode < 500, `${payload.slice(0, 60)} -> ${response.statusCode} ${response.body.slice(0, 200)}`);
        assert.match(String(response.headers["content-type"]), /^application\/(problem\+)?json/);
      }
      const refused = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: '{"items": [1, "s", null, true, {}, []]}' });
      assert.equal(refused.statusCode, 200, "a list of non-items: every one refused in its place");
      assert.deepEqual(resultsOf(refused).map((r) => r.status), [400, 400, 400, 400, 400, 400]);
      const text = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "text/plain" }, payload: "items" });
      assert.equal(text.statusCode, 415);
      const badKey = await bulk({ items: [validWorkItem()] }, { "idempotency-key": "k".repeat(256) });
      assert.equal(badKey.statusCode, 400);
      const wrongMethod = await t.app.inject({ method: "GET", url: URL, headers: bearer(tenant.token) });
      assert.equal(wrongMethod.statusCode, 405);
      assert.deepEqual(await t.countRows(), before);
    });
  });

  describe(`AddWorkItemCreateBulk and the per-company rate limit [${backend.name}]`, () => {
    let t: TestApp;
    before(async () => {
      // A bucket of 20, refilling at 10 a second (the reserve of 10 in 10 s).
      t = await createTestApp(backend, { RATE_LIMIT_TENANT_RPS: "10", RATE_LIMIT_TENANT_BURST: "20" });
    });
    after(() => t.close());

    const bulk = (tenant: Tenant, count: number, prefix: string) =>
      t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: JSON.stringify({ items: items(prefix, count) }) });
    const ping = (tenant: Tenant) => t.app.inject({ url: PING, headers: bearer(tenant.token) });

    test("each item counts as one request: what the bucket holds passes, more is a 429 with Retry-After, nothing stored", async () => {
      const tenant = await t.tenant(2201);
      // 15 of the 20: the second's 10, and 5 of the reserve, which comes back only after 10 s.
      assert.equal((await bulk(tenant, 15, "rl-a")).statusCode, 200);
      const before = await t.countRows();
      // 18 is more than is left, even once the one-second window has begun again (10 + 5).
      const over = await bulk(tenant, 18, "rl-b");
      assert.equal(over.statusCode, 429, over.body);
      assert.ok(Number(over.headers["retry-after"]) >= 1);
      assert.equal(problem(over).type, "urn:work-item-api:problem:rate-limited");
      assert.deepEqual(await t.countRows(), before, "a refused bulk stores nothing");
      assert.equal((await ping(tenant)).statusCode, 200, "what is left in the bucket is still there");
    });

    test("a bulk larger than the bucket passes only when it is full, and leaves it in debt", async () => {
      const tenant = await t.tenant(2202);
      assert.equal((await bulk(tenant, 15, "debt-before")).statusCode, 200, "this spends part of the reserve, for 10 s");
      const notFull = await bulk(tenant, 50, "debt-early");
      assert.equal(notFull.statusCode, 429, "not full: refused");
      assert.ok(Number(notFull.headers["retry-after"]) >= 1);

      const fresh = await t.tenant(2203);
      const started = Date.now();
      const inDebt = await bulk(fresh, 50, "debt");
      assert.equal(inDebt.statusCode, 200, inDebt.body);
      assert.equal(resultsOf(inDebt).filter((r) => r.workItemId).length, 50);
      // 50 from a bucket of 20 at 10 a second: 30 owed, so 3 s before the next request passes.
      const next = await ping(fresh);
      assert.equal(next.statusCode, 429);
      const retryAfter = Number(next.headers["retry-after"]);
      assert.ok(retryAfter >= 1 && retryAfter <= 3, `Retry-After ${next.headers["retry-after"]}`);
      assert.equal((await bulk(fresh, 2, "debt-more")).statusCode, 429);
      await sleep(Math.max(0, 3200 - (Date.now() - started)));
      assert.equal((await ping(fresh)).statusCode, 200, "the debt is paid after 3 s");
    });
  });
}
