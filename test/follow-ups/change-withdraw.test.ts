/**
 * Changing and withdrawing a document (SPEC §15), black box on both stores: the two routes, the
 * views and filters, a change or withdrawal applied before filing, and the bot filing them after,
 * one at a time in intake order, against the simulator over real HTTP.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SimApplication } from "../../src/authority-sim/server.ts";
import type { WorkItemView } from "../../src/domain/views.ts";
import { availableBackends } from "../helpers/backends.ts";
import { setConfig, withBot, type Setup } from "../helpers/bot-harness.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const hook = "https://93.184.215.14/hooks";

function routes(s: Setup) {
  const post = (path: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    s.t.app.inject({ method: "POST", url: `/api/AuthorityRvdm/${path}`, headers: { ...bearer(s.tenant.token), ...headers }, payload });
  const list = async (query: string) => {
    const response = await s.t.app.inject({ method: "GET", url: `/api/AuthorityRvdm/WorkItems?${query}`, headers: bearer(s.tenant.token) });
    assert.equal(response.statusCode, 200, response.body);
    return response.json<{ items: WorkItemView[] }>().items;
  };
  return {
    change: (originalWorkItemId: number, changes: Record<string, unknown>, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
      post("AddWorkItemChange", { originalWorkItemId, customerReference: "CHANGE-1", changes, ...extra }, headers),
    withdraw: (originalWorkItemId: number, extra: Record<string, unknown> = {}, headers?: Record<string, string>) =>
      post("AddWorkItemWithdraw", { originalWorkItemId, customerReference: "WITHDRAW-1", reason: "The transport was called off.", ...extra }, headers),
    list,
    held: async (applicationNumber: string) => (await fetch(`${s.sim.url}/_sim/applications/${applicationNumber}`)).json() as Promise<SimApplication>,
    history: (workItemId: number) =>
      s.t.query<{ kind: string; detail: string | null }>("SELECT kind, detail FROM work_item_history WHERE work_item_id = $1 ORDER BY entry_id", [workItemId]),
  };
}

const keyOf = (response: { statusCode: number; body: string; json<T>(): T }) => {
  assert.equal(response.statusCode, 200, response.body);
  return response.json<{ workBatchId: number; workItemId: number }>();
};

for (const backend of await availableBackends()) {
  describe(`changing and withdrawing a document [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("before the original is filed, a change is applied at once and moves its deadline; a withdrawal cancels it", () =>
      withBot(backend, {}, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem({ webhookUrl: hook }));
        const before = await s.item(original.workItemId);
        assert.deepEqual([before.kind, before.originalWorkItemId, before.revision], ["create", null, 0]);

        const later = new Date(Date.now() + 14 * 86_400_000).toISOString();
        const change = keyOf(await r.change(original.workItemId, { exportDate: later, plannedLoad: "28" }));
        const changed = await s.item(original.workItemId);
        assert.equal(changed.status, "New");
        assert.equal(changed.revision, 1);
        assert.equal(changed.request.exportDate, later);
        assert.equal(changed.request.plannedLoad, 28, "a number in a string is taken, as the create takes it");
        assert.ok(Date.parse(changed.deadlineAt!) > Date.parse(before.deadlineAt!), "the later transport moved the deadline");
        const changeItem = await s.item(change.workItemId);
        assert.deepEqual([changeItem.kind, changeItem.originalWorkItemId, changeItem.status, changeItem.revision], ["change", original.workItemId, "Successful", undefined]);
        assert.deepEqual(changeItem.result, { appliedBeforeFiling: true, revision: 1 });
        assert.deepEqual(await s.t.outboxEvents(original.workItemId), ["workitem.changed"]);

        const withdrawal = keyOf(await r.withdraw(original.workItemId));
        assert.equal((await s.item(original.workItemId)).status, "Cancelled");
        assert.deepEqual((await s.item(withdrawal.workItemId)).result, { appliedBeforeFiling: true });
        assert.deepEqual(
          (await r.history(original.workItemId)).map((entry) => entry.kind),
          ["change", "withdraw", "status"],
          "the original's timeline shows the change and the withdrawal",
        );
        assert.ok((await r.history(original.workItemId)).every((entry) => entry.kind === "status" || entry.detail?.includes(String(entry.kind === "change" ? change.workItemId : withdrawal.workItemId))));

        const closed = await r.change(original.workItemId, { plannedLoad: 1 });
        assert.equal(closed.statusCode, 409);
        assert.equal(closed.json<{ code: string }>().code, "ORIGINAL_CLOSED");
        assert.deepEqual(await s.run(), { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 }, "nothing to file: all was applied before filing");
        assert.equal(s.sim.stats().requests, 0);
      }));

    test("after filing, the bot files the changes and the withdrawal one at a time in intake order, and the original takes each", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "60000" }, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem({ webhookUrl: hook }));
        assert.deepEqual(await s.run(), { batches: 1, submitted: 1, succeeded: 0, failed: 0, retried: 0 });
        const filed = await s.item(original.workItemId);
        assert.equal(filed.status, "Submitted");

        const first = keyOf(await r.change(original.workItemId, { plannedLoad: 20 }, { webhookUrl: hook }));
        const second = keyOf(await r.change(original.workItemId, { productName: { sendValue: "VARKENSMEST" } }));
        const withdrawal = keyOf(await r.withdraw(original.workItemId));
        assert.equal((await s.item(first.workItemId)).status, "New", "waits for the bot");
        assert.equal((await s.item(first.workItemId)).deadlineAt, new Date(Date.parse(filed.request.exportDate as string) - 12 * 3600_000).toISOString(), "due by the change cutoff");
        const pending = await r.withdraw(original.workItemId);
        assert.equal(pending.statusCode, 409);
        assert.equal(pending.json<{ code: string }>().code, "WITHDRAWAL_PENDING");

        // One pass: the three are filed one after the other, each once the one before it is done.
        const counts = await s.run();
        assert.equal(counts.succeeded, 3, JSON.stringify(counts));
        const keys = s.sim.stats().keys;
        assert.deepEqual([first, second, withdrawal].map((key) => [keys[String(key.workItemId)]?.changes ?? 0, keys[String(key.workItemId)]?.withdrawals ?? 0]), [[1, 0], [1, 0], [0, 1]]);
        const held = await r.held(filed.authority.applicationNumber!);
        assert.deepEqual([held.status, held.revision, held.document.plannedLoad, (held.document.productName as { sendValue: string }).sendValue], ["withdrawn", 2, 20, "VARKENSMEST"]);

        const after = await s.item(original.workItemId);
        assert.deepEqual([after.status, after.revision, after.request.plannedLoad], ["Withdrawn", 2, 20]);
        assert.deepEqual((await s.item(first.workItemId)).result, { revision: 1 });
        assert.deepEqual((await s.item(second.workItemId)).result, { revision: 2 });
        assert.equal((await s.item(withdrawal.workItemId)).status, "Successful");
        assert.deepEqual(await s.t.outboxEvents(original.workItemId), ["workitem.submitted", "workitem.changed", "workitem.changed", "workitem.withdrawn"]);
        assert.deepEqual(await s.t.outboxEvents(first.workItemId), ["workitem.succeeded"], "the change item's own webhook");

        assert.deepEqual((await r.list(`originalWorkItemId=${original.workItemId}`)).map((item) => item.workItemId), [withdrawal, second, first].map((key) => key.workItemId));
        assert.deepEqual((await r.list("kind=withdraw")).map((item) => item.workItemId), [withdrawal.workItemId]);
        assert.deepEqual((await r.list("kind=create")).map((item) => item.workItemId), [original.workItemId]);
        assert.equal((await r.change(original.workItemId, { plannedLoad: 1 })).json<{ code: string }>().code, "ORIGINAL_CLOSED");

        // The console links the original and its changes both ways; its timeline shows them.
        const admin = await createOperatorAccount(s.t.store, { email: "ops@example.com", role: "viewer" });
        const consoleClient = await signedInClient(s.t.app, admin.email, admin.password);
        const originalPage = (await consoleClient.get(`/console/work-items/${original.workItemId}`)).body;
        for (const key of [first, second, withdrawal]) assert.ok(originalPage.includes(`href="/console/work-items/${key.workItemId}"`), `links ${key.workItemId}`);
        assert.match(originalPage, new RegExp(`Change ${first.workItemId} accepted by the Authority: revision 1`));
        assert.match(originalPage, /Revision 2/);
        const changePage = (await consoleClient.get(`/console/work-items/${first.workItemId}`)).body;
        assert.ok(changePage.includes(`href="/console/work-items/${original.workItemId}"`), "the change links its original");
      }));

    test("a rejected change fails alone and leaves the original untouched; the next change goes on", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "60000" }, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem());
        await s.run();
        const bad = keyOf(await r.change(original.workItemId, { senderChamberOfCommerceNo: { sendValue: "123" } }));
        const good = keyOf(await r.change(original.workItemId, { plannedLoad: 12 }));
        await s.run();
        const rejected = await s.item(bad.workItemId);
        assert.equal(rejected.status, "Failed");
        assert.equal(rejected.error!.code, "AUTHORITY_REJECTED");
        assert.ok(rejected.error!.details.some((reason) => reason.field === "senderChamberOfCommerceNo"));
        const after = await s.item(original.workItemId);
        assert.deepEqual([after.status, after.revision, after.request.plannedLoad, (after.request.senderChamberOfCommerceNo as { sendValue: string }).sendValue], ["Submitted", 1, 12, "12345678"]);
        assert.deepEqual((await s.item(good.workItemId)).result, { revision: 1 });
      }));

    test("a change waiting for an original that then fails ends ORIGINAL_CLOSED without a call", () =>
      withBot(backend, { BOT_MAX_ATTEMPTS: "2" }, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem());
        await setConfig(s.sim, { outage: true });
        assert.equal((await s.run()).retried, 1, "not filed: the original stays New in a batch the bot took up");
        const change = keyOf(await r.change(original.workItemId, { plannedLoad: 2 }));
        assert.equal((await s.item(change.workItemId)).status, "New", "stored, waiting for its original to be filed");
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal((await s.run()).failed, 1, "out of attempts: the original fails without ever being filed");
        assert.equal((await s.item(original.workItemId)).error?.code, "AUTHORITY_UNAVAILABLE");
        const closed = await s.item(change.workItemId);
        assert.deepEqual([closed.status, closed.error?.code], ["Failed", "ORIGINAL_CLOSED"]);
        assert.equal(s.sim.stats().keys[String(change.workItemId)]?.changes ?? 0, 0, "no call was made");
        assert.equal((await r.change(original.workItemId, { plannedLoad: 1 })).json<{ code: string }>().code, "ORIGINAL_CLOSED");
      }));

    test("an operator's retry files a failed change again, once its original is filed", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "60000", BOT_MAX_ATTEMPTS: "1" }, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem());
        await s.run();
        const change = keyOf(await r.change(original.workItemId, { plannedLoad: 9 }));
        await setConfig(s.sim, { outage: true });
        await s.run();
        assert.equal((await s.item(change.workItemId)).error?.code, "AUTHORITY_UNAVAILABLE");
        await setConfig(s.sim, { outage: false });
        const action = { operator: { operatorId: "op_1", email: "ops@example.com" }, reason: "the authority is back", at: new Date().toISOString() };
        assert.equal((await s.t.store.retryWorkItem(change.workItemId, { batchMaxItems: 1000 }, action)).kind, "done");
        await s.run();
        assert.deepEqual((await s.item(change.workItemId)).result, { revision: 1 });
        assert.equal((await s.item(original.workItemId)).request.plannedLoad, 9);
      }));

    test("a change past its cutoff fails without a call; a withdrawal is still filed", () =>
      withBot(backend, { CHANGE_CUTOFF_HOURS: "0" }, async (s) => {
        const r = routes(s);
        // Time enough for the add, a pass and the first change on a loaded machine; then it passes.
        const soon = new Date(Date.now() + 6000).toISOString();
        const original = await s.add(validWorkItem({ exportDate: soon }));
        await setConfig(s.sim, { decisionDelayMs: 60_000 });
        await s.run();
        const change = keyOf(await r.change(original.workItemId, { plannedLoad: 2 }));
        const withdrawal = keyOf(await r.withdraw(original.workItemId));
        await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) + 100 - Date.now()));
        assert.equal((await r.change(original.workItemId, { plannedLoad: 3 })).json<{ code: string }>().code, "WITHDRAWAL_PENDING");
        await s.run();
        const late = await s.item(change.workItemId);
        assert.deepEqual([late.status, late.error?.code], ["Failed", "CHANGE_CUTOFF_PASSED"]);
        assert.equal(s.sim.stats().keys[String(change.workItemId)]?.changes ?? 0, 0, "no call was made");
        assert.equal((await s.item(withdrawal.workItemId)).status, "Successful");
        assert.equal((await s.item(original.workItemId)).status, "Withdrawn");
      }));

    test("refusals: unknown or foreign original 404, a change item as original 400, empty changes 400, idempotent replays", () =>
      withBot(backend, {}, async (s) => {
        const r = routes(s);
        const original = await s.add(validWorkItem());
        const other = await s.t.tenant(8);
        const foreign = await s.t.app.inject({
          method: "POST",
          url: "/api/AuthorityRvdm/AddWorkItemWithdraw",
          headers: bearer(other.token),
          payload: { originalWorkItemId: original.workItemId, customerReference: "X", reason: "r" },
        });
        assert.equal(foreign.statusCode, 404);
        assert.equal((await r.withdraw(999_999)).statusCode, 404);
        for (const id of [5.4e202, Number.MAX_SAFE_INTEGER + 2]) {
          const huge = await r.change(id, { plannedLoad: 3 });
          assert.equal(huge.statusCode, 400, `an id beyond the safe integers (${id}) is a bad request, not a store error`);
          assert.ok(huge.json<{ errors: Record<string, string[]> }>().errors.originalWorkItemId);
        }

        const empty = await r.change(original.workItemId, {});
        assert.equal(empty.statusCode, 400);
        assert.match(empty.headers["content-type"] as string, /problem\+json/);
        assert.equal((await r.change(original.workItemId, { customerReference: "no" })).statusCode, 400, "not a declaration field");
        assert.equal((await r.change(original.workItemId, { plannedLoad: -1 })).statusCode, 400, "each field by its own rule");
        assert.equal((await r.withdraw(original.workItemId, { reason: "" })).statusCode, 400);
        assert.equal((await r.withdraw(original.workItemId, { reason: "x".repeat(501) })).statusCode, 400);

        const headers = { "idempotency-key": "change-once" };
        const first = keyOf(await r.change(original.workItemId, { plannedLoad: 3 }, {}, headers));
        const again = await r.change(original.workItemId, { plannedLoad: 3 }, {}, headers);
        assert.deepEqual(keyOf(again), first);
        assert.equal(again.headers["idempotency-replayed"], "true");
        assert.equal((await s.item(original.workItemId)).revision, 1, "the replay stored nothing");
        assert.equal((await r.change(original.workItemId, { plannedLoad: 4 }, {}, headers)).statusCode, 422);

        const asOriginal = await r.withdraw(first.workItemId);
        assert.equal(asOriginal.statusCode, 400);
        assert.ok(asOriginal.json<{ errors: Record<string, string[]> }>().errors.originalWorkItemId);
      }));
  });
}
