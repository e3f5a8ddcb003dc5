/**
 * POST /api/Operator/WorkItems/Retry (SPEC §12.2) on each store: every Failed item that matches
 * the filter goes back to New, across chunks, with one audit entry each; the filters narrow it;
 * bad bodies are 400s. The bound of 10,000 per call is proven on the chunking loop itself.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MAX_RETRIED, retryInChunks } from "../../../src/surfaces/operator/retry-work-items.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { runOneBotPass } from "../../helpers/bot-harness.ts";
import { createTestOperator, type TestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

const REJECTED = { senderChamberOfCommerceNo: { sendValue: "123" } };
/** More than one chunk of the route's loop (100). */
const MANY = 150;

describe("retryInChunks", () => {
  /** A pool of `size` failed items, retried `limit` at a time, as the store does. */
  const pool = (size: number) => {
    const calls: number[] = [];
    let left = size;
    return {
      calls,
      retryChunk: async (limit: number) => {
        calls.push(limit);
        const retried = Math.min(limit, left);
        left -= retried;
        return retried;
      },
    };
  };

  test(`stops at ${MAX_RETRIED} however many match`, async () => {
    const big = pool(25_000);
    assert.equal(await retryInChunks(big.retryChunk), MAX_RETRIED);
    assert.ok(big.calls.every((limit) => limit <= 100));
    assert.equal(big.calls.reduce((sum, limit) => sum + limit, 0), MAX_RETRIED);
  });

  test("stops when a chunk comes back short, and asks once when nothing matches", async () => {
    const some = pool(250);
    assert.equal(await retryInChunks(some.retryChunk), 250);
    assert.deepEqual(some.calls, [100, 100, 100]);
    const none = pool(0);
    assert.equal(await retryInChunks(none.retryChunk), 0);
    assert.deepEqual(none.calls, [100]);
    const bounded = pool(1000);
    assert.equal(await retryInChunks(bounded.retryChunk, 250, 100), 250);
    assert.deepEqual(bounded.calls, [100, 100, 50]);
  });
});

for (const backend of await availableBackends()) {
  describe(`operator bulk retry [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let t: TestApp;
    let many: Tenant;
    let few: Tenant;
    let ops: TestOperator;
    let code: string;

    const retry = (body: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/Operator/WorkItems/Retry", headers: bearer(ops.token), payload: body });
    const retried = async (body: Record<string, unknown>) => {
      const response = await retry({ reason: "bulk retry after the outage", status: "Failed", ...body });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ retried: number }>().retried;
    };
    const statuses = async (tenant: Tenant) => {
      const response = await t.app.inject({ url: "/api/AuthorityRvdm/WorkItems?limit=200", headers: bearer(tenant.token) });
      const counts: Record<string, number> = {};
      for (const item of response.json<{ items: Array<{ status: string }> }>().items) counts[item.status] = (counts[item.status] ?? 0) + 1;
      return counts;
    };

    before(async () => {
      t = await createTestApp(backend);
      many = await t.tenant(2301);
      few = await t.tenant(2302);
      ops = await createTestOperator(t.store, "admin");
      const items = Array.from({ length: MANY }, (_, i) => validWorkItem({ customerReference: `MANY-${i}`, ...REJECTED }));
      const bulk = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreateBulk", headers: bearer(many.token), payload: { items } });
      assert.equal(bulk.statusCode, 200, bulk.body);
      for (let i = 0; i < 2; i++) {
        await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(few.token), payload: validWorkItem({ customerReference: `FEW-${i}`, ...REJECTED }) });
      }
      await runOneBotPass(t);
      assert.deepEqual(await statuses(many), { Failed: MANY });
      const failed = await t.app.inject({ url: "/api/Operator/WorkItems?status=Failed&limit=1", headers: bearer(ops.token) });
      code = failed.json<{ items: Array<{ error: { code: string } }> }>().items[0]!.error.code;
    });
    after(() => t.close());

    test("bad bodies are 400 problems and retry nothing", async () => {
      for (const body of [
        { reason: "x" },
        { reason: "x", status: "New" },
        { status: "Failed" },
        { reason: "", status: "Failed" },
        { reason: "x", status: "Failed", companyId: 0 },
        { reason: "x", status: "Failed", failedAfter: "yesterday" },
        { reason: "x", status: "Failed", code: "" },
        { reason: "x", status: "Failed", workType: "AuthorityRvdm" },
      ]) {
        const response = await retry(body);
        assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
        assert.ok(Object.keys(problem(response).errors ?? {}).length > 0);
      }
      assert.deepEqual(await statuses(many), { Failed: MANY });
    });

    test("filters that match nothing retry nothing", async () => {
      assert.equal(await retried({ code: "NO_SUCH_CODE" }), 0);
      assert.equal(await retried({ failedAfter: new Date(Date.now() + 3_600_000).toISOString() }), 0);
      assert.equal(await retried({ companyId: 999_999 }), 0);
    });

    test("one company's failures, then every other match across chunks, each with its audit entry", async () => {
      assert.equal(await retried({ companyId: few.companyId, code }), 2);
      assert.deepEqual(await statuses(few), { New: 2 });
      assert.deepEqual(await statuses(many), { Failed: MANY });

      assert.equal(await retried({ failedAfter: new Date(Date.now() - 3_600_000).toISOString() }), MANY);
      assert.deepEqual(await statuses(many), { New: MANY });
      assert.equal(await retried({}), 0, "retried items are no longer Failed");

      const audit = await t.app.inject({ url: "/api/Operator/Audit?limit=500", headers: bearer(ops.token) });
      const entries = audit.json<{ entries: Array<{ action: string; reason: string }> }>().entries;
      assert.equal(entries.length, MANY + 2);
      assert.ok(entries.every((entry) => entry.action === "workitem.retry" && entry.reason === "bulk retry after the outage"));
    });
  });
}
