/**
 * Expired idempotency keys are deleted (SPEC §11.5): by a sweep bounded per pass, company by
 * company, that leaves keys still inside their 24 hours alone, on both stores.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { IDEMPOTENCY_RETENTION_SECONDS, sweepExpiredIdempotencyKeys } from "../../src/retention/idempotency-sweep.ts";
import { availableBackends } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { bearer, createTestApp, validWorkItem, type TestApp } from "../helpers/test-app.ts";

// Every statement the sweep sends must name its company (checked at the end).
recordStoreStatements();

for (const backend of await availableBackends()) {
  describe(`idempotency key sweep [${backend.name}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(backend);
    });
    after(() => t.close());

    const addWithKey = (token: string, key: string, body = validWorkItem()) =>
      t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { ...bearer(token), "idempotency-key": key }, payload: body });
    const keysOf = async (companyId: number) =>
      (await t.query<{ idempotency_key: string }>("SELECT idempotency_key FROM idempotency_keys WHERE company_id = $1 ORDER BY idempotency_key", [companyId])).map(
        (row) => row.idempotency_key,
      );

    test("deletes only expired keys, at most maxRows a pass, across companies", async () => {
      const a = await t.tenant(901);
      const b = await t.tenant(902);
      for (const key of ["a1", "a2", "a3"]) assert.equal((await addWithKey(a.token, key)).statusCode, 200);
      for (const key of ["b1", "b2"]) assert.equal((await addWithKey(b.token, key)).statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const now = new Date();
      assert.equal((await addWithKey(a.token, "a-fresh")).statusCode, 200);
      // A retention of 1 s: the first five keys are past it at `now`, the last is not.
      const pass = () => sweepExpiredIdempotencyKeys(t.store, { now, maxRows: 4, retentionSeconds: 1 });
      assert.equal(await pass(), 4, "the first pass stops at its bound");
      assert.equal(await pass(), 1);
      assert.equal(await pass(), 0, "nothing left to sweep");
      assert.deepEqual(await keysOf(901), ["a-fresh"]);
      assert.deepEqual(await keysOf(902), []);
    });

    test("a key inside its retention still replays after a sweep", async () => {
      const tenant = await t.tenant(903);
      const body = validWorkItem();
      const add = () => addWithKey(tenant.token, "keep-me", body);
      const first = await add();
      assert.equal(first.statusCode, 200, first.body);
      await sweepExpiredIdempotencyKeys(t.store, { now: new Date(), maxRows: 100 });
      const again = await add();
      assert.equal(again.headers["idempotency-replayed"], "true");
      assert.deepEqual(again.json(), first.json());
      // A day later the same sweep deletes it, and the key is free for a new item.
      await sweepExpiredIdempotencyKeys(t.store, { now: new Date(Date.now() + (IDEMPOTENCY_RETENTION_SECONDS + 1) * 1000), maxRows: 100 });
      assert.deepEqual(await keysOf(903), []);
    });
  });
}
