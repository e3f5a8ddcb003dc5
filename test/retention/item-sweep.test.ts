/**
 * Items past ITEM_RETENTION_DAYS are erased (SPEC §22) with their history, events, outbox rows
 * and attempts, their follow-ups and their batch once empty, by a sweep bounded per pass and per
 * transaction, company by company; unfinished items stay, and so does a create whose follow-up
 * is unfinished or finished later. The counts the overview reads stay right, and no erased id
 * comes back (on SQLite, where the erased item had the largest ids). On both stores.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sweepExpiredItems } from "../../src/retention/item-sweep.ts";
import type { WorkItemView } from "../../src/domain/views.ts";
import { availableBackends } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { withWebhooks, type WebhookSetup } from "../helpers/webhook-harness.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

// Every statement the sweep sends must name its company (checked at the end).
recordStoreStatements();

const DAY = 86_400_000;

/** Every row that names one of `ids`, table by table, read past the store. */
async function rowsNaming(s: WebhookSetup, ids: number[]): Promise<Record<string, number>> {
  const list = ids.join(", ");
  const tables = ["work_items", "work_item_history", "events", "webhook_outbox", "idempotency_keys"];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await s.t.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE work_item_id IN (${list})`);
    counts[table] = Number(row!.n);
  }
  const [attempts] = await s.t.query<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM webhook_delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.company_id = a.company_id AND o.delivery_id = a.delivery_id)`,
  );
  counts.orphanAttempts = Number(attempts!.n);
  return counts;
}

/** The counts the overview reads against the items there are, per company and final state. */
async function assertCountsRight(s: WebhookSetup): Promise<void> {
  const kept = await s.t.query<{ company_id: number | string; status: string; item_count: number | string }>(
    "SELECT company_id, status, item_count FROM company_item_counts WHERE item_count <> 0 ORDER BY company_id, status",
  );
  const real = await s.t.query<{ company_id: number | string; status: string; item_count: number | string }>(
    `SELECT company_id, status, COUNT(*) AS item_count FROM work_items WHERE status NOT IN ('New', 'InProgress')
      GROUP BY company_id, status ORDER BY company_id, status`,
  );
  const plain = (rows: typeof kept) => rows.map((row) => `${row.company_id}/${row.status}=${row.item_count}`);
  assert.deepEqual(plain(kept), plain(real), "company_item_counts holds what is there");
}

const keyOf = (response: { statusCode: number; body: string; json<T>(): T }) => {
  assert.equal(response.statusCode, 200, response.body);
  return response.json<{ workBatchId: number; workItemId: number }>();
};

const addChange = (s: WebhookSetup, originalWorkItemId: number) =>
  s.t.app.inject({
    method: "POST",
    url: "/api/AuthorityRvdm/AddWorkItemChange",
    headers: bearer(s.tenant.token),
    payload: { originalWorkItemId, customerReference: "CHANGE", changes: { plannedLoad: 3 } },
  });

for (const backend of await availableBackends()) {
  describe(`item retention sweep [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("erases items finished before the retention with everything that hangs on them, and only them", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const other = await s.t.tenant(12);
        const dispatcher = s.dispatcher();
        // Finished before the cutoff: a create with its delivery and attempt, a create with a change applied, one of another company.
        const plain = await s.complete(validWorkItem({ customerReference: "PLAIN" }));
        const family = await s.complete(validWorkItem({ customerReference: "FAMILY" }));
        const change = keyOf(await addChange(s, family.workItemId));
        const theirs = await s.complete(validWorkItem({ customerReference: "THEIRS" }), undefined, other);
        const blocked = await s.complete(validWorkItem({ customerReference: "BLOCKED" }));
        await dispatcher.deliverDue();
        assert.equal((await s.t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${change.workItemId}`, headers: bearer(s.tenant.token) })).json<WorkItemView>().status, "Successful");
        await new Promise((resolve) => setTimeout(resolve, 20));
        const cutoff = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 20));
        // After it: an item finished later, a change of `blocked` not filed yet, an item never filed.
        const late = await s.complete(validWorkItem({ customerReference: "LATE" }));
        const blockedChange = keyOf(await addChange(s, blocked.workItemId));
        const unfinished = keyOf(await s.t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(s.tenant.token), payload: validWorkItem() }));
        await dispatcher.deliverDue();

        const erased = [plain.workItemId, family.workItemId, change.workItemId, theirs.workItemId];
        const kept = [blocked.workItemId, blockedChange.workItemId, late.workItemId, unfinished.workItemId];
        const before = await rowsNaming(s, erased);
        assert.ok(before.work_items === 4 && before.work_item_history! > 0 && before.events! > 0 && before.webhook_outbox! > 0, JSON.stringify(before));
        const batchesOfErased = (await s.t.query<{ work_batch_id: number | string }>(`SELECT DISTINCT work_batch_id FROM work_items WHERE work_item_id IN (${erased.join(", ")})`)).map((r) => Number(r.work_batch_id));
        const keptBefore = await rowsNaming(s, kept);

        const now = new Date(cutoff + DAY);
        const pass = () => sweepExpiredItems(s.t.store, { now, retentionDays: 1, maxRows: 2, chunkRows: 1 });
        assert.equal(await pass(), 3, "the first pass stops at its bound: a create, then a family goes whole");
        assert.equal(await pass(), 1, "the other company's");
        assert.equal(await pass(), 0, "nothing left to erase");

        assert.deepEqual(await rowsNaming(s, erased), { work_items: 0, work_item_history: 0, events: 0, webhook_outbox: 0, idempotency_keys: 0, orphanAttempts: 0 });
        assert.deepEqual(await rowsNaming(s, kept), keptBefore, "what is not past its retention is untouched");
        const batchesLeft = await s.t.query(`SELECT work_batch_id FROM work_batches WHERE work_batch_id IN (${batchesOfErased.join(", ")})`);
        assert.deepEqual(batchesLeft, [], "their batches went with their last items");
        await assertCountsRight(s);

        // Through the API: gone for the integrator, the others' as they were.
        for (const id of [plain.workItemId, family.workItemId]) {
          assert.equal((await s.t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${id}`, headers: bearer(s.tenant.token) })).statusCode, 404);
        }
        assert.equal((await s.t.app.inject({ url: `/api/AuthorityRvdm/WorkBatch/${plain.workBatchId}`, headers: bearer(s.tenant.token) })).statusCode, 404);
        const feed = (await s.t.app.inject({ url: "/api/Events", headers: bearer(s.tenant.token) })).json<{ events: Array<{ data: { workItemId: number } }> }>();
        assert.ok(feed.events.every((event) => !erased.includes(event.data.workItemId)), "no event of an erased item in the feed");
        const deliveries = (await s.t.app.inject({ url: "/api/Webhooks/Deliveries", headers: bearer(s.tenant.token) })).json<{ deliveries: Array<{ workItemId: number }> }>();
        assert.ok(deliveries.deliveries.length > 0 && deliveries.deliveries.every((d) => !erased.includes(d.workItemId)));

        // Once the blocked change is long finished too, its family goes; a new unfinished item stays.
        await s.complete(validWorkItem({ customerReference: "FILES THE CHANGE AND THE UNFINISHED ONE" }));
        assert.equal((await s.t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${blockedChange.workItemId}`, headers: bearer(s.tenant.token) })).json<WorkItemView>().status, "Successful");
        const waiting = keyOf(await s.t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(s.tenant.token), payload: validWorkItem() }));
        const muchLater = new Date(Date.now() + 2 * DAY);
        const left = await sweepExpiredItems(s.t.store, { now: muchLater, retentionDays: 1, maxRows: 100 });
        assert.equal(left, 5, "blocked with its change, late, unfinished once filed, and the last one");
        assert.deepEqual((await s.t.query<{ work_item_id: number | string }>("SELECT work_item_id FROM work_items")).map((r) => Number(r.work_item_id)), [waiting.workItemId]);
        await assertCountsRight(s);
      }));

    test("a new item, batch and delivery never get the id of an erased one, even when it had the largest", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const first = await s.complete(validWorkItem());
        const last = await s.complete(validWorkItem());
        await s.dispatcher().deliverDue();
        const largest = async () => {
          const [row] = await s.t.query<{ item: number | string; batch: number | string; delivery: number | string }>(
            "SELECT (SELECT MAX(work_item_id) FROM work_items) AS item, (SELECT MAX(work_batch_id) FROM work_batches) AS batch, (SELECT MAX(delivery_id) FROM webhook_outbox) AS delivery",
          );
          return { item: Number(row!.item), batch: Number(row!.batch), delivery: Number(row!.delivery) };
        };
        const erased = await largest();
        assert.equal(erased.item, last.workItemId);
        assert.equal(await sweepExpiredItems(s.t.store, { now: new Date(Date.now() + 2 * DAY), retentionDays: 1, maxRows: 100 }), 2);
        assert.equal(Number((await s.t.query<{ n: number | string }>("SELECT COUNT(*) AS n FROM work_items"))[0]!.n), 0, "the store holds no item at all");

        const next = await s.complete(validWorkItem());
        assert.ok(next.workItemId > erased.item, `item ${next.workItemId} after erased ${first.workItemId}…${erased.item}`);
        assert.ok(next.workBatchId > erased.batch, `batch ${next.workBatchId} after erased ${erased.batch}`);
        await s.dispatcher().deliverDue();
        const now = await largest();
        assert.ok(now.delivery > erased.delivery, `delivery ${now.delivery} after erased ${erased.delivery}`);
      }));
  });
}
