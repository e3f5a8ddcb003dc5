import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";

const URL = "/api/AuthorityRvdm/AddWorkItemCreate";

for (const backend of await availableBackends()) {
  describe(`AddWorkItemCreate [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(backend, { BATCH_MAX_ITEMS: "3" });
      tenant = await t.tenant(101);
    });
    after(() => t.close());

    const add = (body: unknown, headers: Record<string, string> = {}, token = tenant.token) =>
      t.app.inject({ method: "POST", url: URL, headers: { ...bearer(token), "content-type": "application/json", ...headers }, payload: JSON.stringify(body) });

    test("is guarded", () => assertRouteIsGuarded(t, tenant, { method: "POST", url: URL, payload: validWorkItem() }));

    test("stores the item New in the Open batch and returns the batch key", async () => {
      const response = await add(validWorkItem({ customerReference: "happy" }));
      assert.equal(response.statusCode, 200, response.body);
      const key = response.json<{ workBatchId: number; workItemId: number }>();
      assert.ok(key.workBatchId > 0 && key.workItemId > 0);
      const item = await t.store.getWorkItem(tenant.companyId, key.workItemId);
      assert.equal(item?.status, "New");
      assert.equal(item?.customerReference, "happy");
      assert.equal((await t.store.getWorkBatch(tenant.companyId, key.workBatchId))?.status, "Open");
    });

    test("binds property names case-insensitively, takes numbers in strings, keeps extra translation objects", async () => {
      const body = {
        CUSTOMERREFERENCE: "compat",
        ProductName: { SendValue: "X", DocumentValue: "x" },
        destinationcountry: { sendvalue: "DE" },
        ExportDate: "2026-12-01T08:00:00",
        SenderChamberOfCommerceNo: { sendValue: "12345678" },
        receiverChamberOfCommerceNo: { sendValue: "87654321" },
        PlannedLoad: "31.5",
        documentReference: null,
        ManureCode: { sendValue: "14", documentValue: "Rundvee" },
      };
      const response = await add(body);
      assert.equal(response.statusCode, 200, response.body);
      const item = await t.store.getWorkItem(tenant.companyId, response.json<{ workItemId: number }>().workItemId);
      assert.equal(item?.request.plannedLoad, 31.5);
      assert.deepEqual(item?.request.productName, { sendValue: "X", documentValue: "x" });
      assert.deepEqual(item?.request.ManureCode, { sendValue: "14", documentValue: "Rundvee" });
      assert.equal(item?.documentReference, null);
    });

    test("exportDate is stored and shown as the UTC instant with Z; without an offset it is UTC", async () => {
      const cases: Array<[string, string]> = [
        ["2026-12-01T08:00:00", "2026-12-01T08:00:00.000Z"],
        ["2026-12-01T08:00:00Z", "2026-12-01T08:00:00.000Z"],
        ["2026-12-01T10:00:00+02:00", "2026-12-01T08:00:00.000Z"],
        ["2026-12-01T03:30:00.1234567-04:30", "2026-12-01T08:00:00.123Z"],
      ];
      for (const [sent, stored] of cases) {
        const response = await add(validWorkItem({ customerReference: `utc-${sent}`, exportDate: sent }));
        assert.equal(response.statusCode, 200, response.body);
        const { workItemId } = response.json<{ workItemId: number }>();
        const shown = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${workItemId}`, headers: bearer(tenant.token) });
        assert.equal(shown.json<{ request: { exportDate: string } }>().request.exportDate, stored, sent);
      }
    });

    test("an impossible calendar date is a 400 naming exportDate, not a date rolled over into the next month", async () => {
      const before = await t.countRows();
      for (const exportDate of ["2027-02-30T00:00:00Z", "2027-04-31T00:00:00Z", "2027-02-29T00:00:00Z", "2100-02-29T00:00:00", "2027-13-01T00:00:00Z", "2027-06-00T00:00:00Z", "0000-06-01T00:00:00Z"]) {
        const response = await add(validWorkItem({ customerReference: `impossible-${exportDate}`, exportDate }));
        assert.equal(response.statusCode, 400, `${exportDate}: ${response.body}`);
        assert.ok(problem(response).errors?.exportDate?.length, `${exportDate}: ${response.body}`);
      }
      assert.deepEqual(await t.countRows(), before, "a refused date stores nothing");
      for (const [exportDate, stored] of [
        ["2028-02-29T00:00:00Z", "2028-02-29T00:00:00.000Z"],
        ["2000-02-29T12:00:00Z", "2000-02-29T12:00:00.000Z"],
        ["2027-04-30T23:59:59Z", "2027-04-30T23:59:59.000Z"],
      ]) {
        const response = await add(validWorkItem({ customerReference: `possible-${exportDate}`, exportDate }));
        assert.equal(response.statusCode, 200, `${exportDate}: ${response.body}`);
        const shown = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${response.json<{ workItemId: number }>().workItemId}`, headers: bearer(tenant.token) });
        assert.equal(shown.json<{ request: { exportDate: string } }>().request.exportDate, stored);
      }
    });

    test("deadlineAt keeps the year of exportDate for the years 0–99 too", async () => {
      // Monday 1 June 0099 (as in 2099: the calendar repeats every 400 years) → back over the
      // weekend to Thursday 28 May or earlier, at 12:00 local mean time (+00:17:30) in Amsterdam.
      const cases: Array<[string, RegExp]> = [
        ["0099-06-01T08:00:00Z", /^0099-05-2[5-8]T11:42:30\.000Z$/],
        ["0001-03-15T08:00:00Z", /^0001-03-1[0-3]T11:42:30\.000Z$/],
        ["0100-06-01T08:00:00Z", /^0100-05-2[5-8]T11:42:30\.000Z$/],
        // Monday 3 January of year 1 would be due in year 0, which PostgreSQL cannot hold: due at the first instant of year 1.
        ["0001-01-03T08:00:00Z", /^0001-01-01T00:00:00\.000Z$/],
      ];
      for (const [exportDate, deadline] of cases) {
        const response = await add(validWorkItem({ customerReference: `early-${exportDate}`, exportDate }));
        assert.equal(response.statusCode, 200, `${exportDate}: ${response.body}`);
        const shown = await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${response.json<{ workItemId: number }>().workItemId}`, headers: bearer(tenant.token) });
        const view = shown.json<{ deadlineAt: string; request: { exportDate: string } }>();
        assert.equal(view.request.exportDate, exportDate.replace("Z", ".000Z"));
        assert.match(view.deadlineAt, deadline, exportDate);
        assert.ok(![0, 6].includes(new Date(view.deadlineAt).getUTCDay()), `${view.deadlineAt} is a working day`);
      }
    });

    test("lists every validation problem at once as problem+json", async () => {
      const before = await t.countRows();
      const response = await add({
        productName: { sendValue: "" },
        exportDate: "yesterday",
        plannedLoad: -1,
        senderDomestic: { sendValue: "yes" },
        notATranslation: 3,
        webhookUrl: "ftp://example.org/x",
        destinationCountry: { sendValue: "DE", extra: 1 },
      });
      assert.equal(response.statusCode, 400);
      assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
      const body = problem(response);
      assert.equal(body.status, 400);
      assert.ok(body.traceId);
      const errors = body.errors ?? {};
      for (const field of [
        "customerReference",
        "senderChamberOfCommerceNo",
        "receiverChamberOfCommerceNo",
        "productName.sendValue",
        "exportDate",
        "plannedLoad",
        "senderDomestic.sendValue",
        "notATranslation",
        "webhookUrl",
        "destinationCountry.extra",
      ]) {
        assert.ok(errors[field]?.length, `errors names ${field}: ${JSON.stringify(errors)}`);
      }
      assert.deepEqual(await t.countRows(), before, "a refused request stores nothing");
    });

    test("refuses a non-numeric plannedLoad string and non-finite numbers", async () => {
      for (const plannedLoad of ["abc", "", "1e999"]) {
        const response = await add(validWorkItem({ plannedLoad }));
        assert.equal(response.statusCode, 400, `plannedLoad ${JSON.stringify(plannedLoad)}`);
        assert.ok(problem(response).errors?.plannedLoad);
      }
    });

    test("rolls over to a new batch at BATCH_MAX_ITEMS and closes the full one", async () => {
      const other = await t.tenant(102);
      const keys = [];
      for (let i = 0; i < 7; i++) keys.push((await add(validWorkItem({ customerReference: `roll-${i}` }), {}, other.token)).json<{ workBatchId: number }>());
      const batchIds = [...new Set(keys.map((k) => k.workBatchId))];
      assert.equal(batchIds.length, 3);
      const statuses = await Promise.all(batchIds.map(async (id) => (await t.store.getWorkBatch(other.companyId, id))?.status));
      assert.deepEqual(statuses, ["Closed", "Closed", "Open"]);
      assert.equal((await t.store.getWorkBatch(other.companyId, batchIds[0]!))?.counts.new, 3);
    });

    test("Idempotency-Key: the same body replays the first answer and stores nothing new", async () => {
      const body = validWorkItem({ customerReference: "idem" });
      const first = await add(body, { "idempotency-key": "key-1" });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers["idempotency-replayed"], undefined);
      const rows = await t.countRows();
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const again = await add(reordered, { "idempotency-key": "key-1" });
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers["idempotency-replayed"], "true");
      assert.deepEqual(again.json(), first.json());
      assert.deepEqual(await t.countRows(), rows);
    });

    test("Idempotency-Key: another body gives 422, another company is independent", async () => {
      await add(validWorkItem({ customerReference: "idem-2" }), { "idempotency-key": "key-2" });
      const reused = await add(validWorkItem({ customerReference: "different" }), { "idempotency-key": "key-2" });
      assert.equal(reused.statusCode, 422);
      assert.equal(problem(reused).status, 422);
      const other = await t.tenant(103);
      const otherCompany = await add(validWorkItem({ customerReference: "different" }), { "idempotency-key": "key-2" }, other.token);
      assert.equal(otherCompany.statusCode, 200);
      assert.equal(otherCompany.headers["idempotency-replayed"], undefined);
    });

    test("Idempotency-Key: a concurrent duplicate gets 409 or the replay, never a second item", async () => {
      const body = validWorkItem({ customerReference: "idem-race" });
      const responses = await Promise.all([1, 2, 3, 4].map(() => add(body, { "idempotency-key": "race" })));
      const ok = responses.filter((r) => r.statusCode === 200);
      assert.ok(ok.length >= 1);
      assert.ok(responses.every((r) => r.statusCode === 200 || r.statusCode === 409), responses.map((r) => r.statusCode).join());
      assert.equal(new Set(ok.map((r) => r.json<{ workItemId: number }>().workItemId)).size, 1);
      const listed = await t.store.listWorkItems(tenant.companyId, { customerReference: "idem-race", limit: 10 });
      assert.equal(listed.length, 1);
    });

    test("text PostgreSQL cannot hold is a 400 wherever it is, references and translation objects alike (SPEC §20)", async () => {
      const before = await t.countRows();
      for (const customerReference of ["nul\u0000byte", "lone\ud800surrogate"]) {
        const response = await add(validWorkItem({ customerReference, documentReference: "ok\udfff", requestNo: { sendValue: "nul\u0000inside" } }));
        assert.equal(response.statusCode, 400, `${JSON.stringify(customerReference)}: ${response.body}`);
        const errors = problem(response).errors;
        assert.ok(errors?.customerReference && errors.documentReference && errors["requestNo.sendValue"], response.body);
      }
      assert.deepEqual(await t.countRows(), before);
      const kept = await add(validWorkItem({ customerReference: "emoji 🐄 ok", requestNo: { sendValue: "\u202e right-to-left" } }));
      assert.equal(kept.statusCode, 200, kept.body);
      const item = await t.store.getWorkItem(tenant.companyId, kept.json<{ workItemId: number }>().workItemId);
      assert.equal(item?.customerReference, "emoji 🐄 ok");
      assert.deepEqual(item?.request.requestNo, { sendValue: "\u202e right-to-left" });
    });

    test("refuses a bad Idempotency-Key", async () => {
      const response = await add(validWorkItem(), { "idempotency-key": "x".repeat(256) });
      assert.equal(response.statusCode, 400);
    });

    test("malformed JSON, wrong content type and an oversized body are 4xx problems", async () => {
      const malformed = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: "{bad" });
      assert.equal(malformed.statusCode, 400);
      const text = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "text/plain" }, payload: "hello" });
      assert.equal(text.statusCode, 415);
      const huge = await add(validWorkItem({ customerReference: "x".repeat(70_000) }));
      assert.equal(huge.statusCode, 413);
      const proto = await t.app.inject({ method: "POST", url: URL, headers: { ...bearer(tenant.token), "content-type": "application/json" }, payload: '{"__proto__":{"a":1}}' });
      assert.equal(proto.statusCode, 400);
      for (const response of [malformed, text, huge, proto]) assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
    });

    test("200 parallel adds for one company land in one batch; never two Open batches", async () => {
      const t2 = await createTestApp(backend);
      try {
        const company = await t2.tenant(200);
        const responses = await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            t2.app.inject({ method: "POST", url: URL, headers: { ...bearer(company.token), "content-type": "application/json" }, payload: JSON.stringify(validWorkItem({ customerReference: `p-${i}` })) }),
          ),
        );
        assert.ok(responses.every((r) => r.statusCode === 200));
        const keys = responses.map((r) => r.json<{ workBatchId: number; workItemId: number }>());
        assert.equal(new Set(keys.map((k) => k.workBatchId)).size, 1);
        assert.equal(new Set(keys.map((k) => k.workItemId)).size, 200);
        const batch = await t2.store.getWorkBatch(company.companyId, keys[0]!.workBatchId);
        assert.equal(batch?.counts.new, 200);
      } finally {
        await t2.close();
      }
    });
  });
}
