/**
 * GET /api/Events (SPEC §11.2) over the real route, on both stores, after real bot passes
 * against the authority simulator and a real webhook delivery: every event type is in the feed
 * whether or not the item has a webhookUrl, `eventId` is the delivery's `webhook-id`, cursors
 * page and poll, filters narrow, bad input is a 400, and a company sees only its own events.
 */
import assert from "node:assert/strict";
import type { Static } from "@sinclair/typebox";
import { after, before, describe, test } from "node:test";
import { startAuthoritySim, type AuthoritySim } from "../../../src/authority-sim/server.ts";
import type { AuthorityAdapter } from "../../../src/authority/protocol.ts";
import { createAuthorityGate } from "../../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../../../src/bot/run-once.ts";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { EventPage } from "../../../src/surfaces/events/list-events.ts";
import { createDispatcher } from "../../../src/webhooks/dispatcher.ts";
import { assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { setConfig } from "../../helpers/bot-harness.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp, type Tenant } from "../../helpers/test-app.ts";
import { startReceiver, type Receiver } from "../../helpers/webhook-receiver.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

type FeedEvent = Static<typeof EventPage>["events"][number];

const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS; under NodeNext its default export is the module object.
(addFormats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
const matchesEventPage = ajv.compile(EventPage);

for (const backend of await availableBackends()) {
  describe(`GET /api/Events [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    let t: TestApp;
    let sim: AuthoritySim;
    let adapter: AuthorityAdapter;
    let receiver: Receiver;
    let a: Tenant;
    let b: Tenant;
    const ids = { ok: 0, rejected: 0, overdue: 0, theirs: 0 };

    const feed = async (tenant: Tenant, query = "") => {
      const response = await t.app.inject({ method: "GET", url: `/api/Events${query}`, headers: bearer(tenant.token) });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.headers["content-type"], "application/json; charset=utf-8");
      const page = response.json<Static<typeof EventPage>>();
      // The page is written from the stored views' text, not through the serialiser: it must still be the documented shape.
      assert.ok(matchesEventPage(page), ajv.errorsText(matchesEventPage.errors));
      return page;
    };
    const add = async (tenant: Tenant, body: Record<string, unknown>) => {
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: body });
      assert.equal(response.statusCode, 200, response.body);
      return response.json<{ workItemId: number }>().workItemId;
    };
    const run = (clock: () => Date = () => new Date()) =>
      runBotOnce({ store: t.store, gate: createAuthorityGate({ store: t.store, adapter, config: t.config, owner: "bot", clock }), config: t.config, owner: "bot", clock });
    const itemsOf = (events: FeedEvent[], workItemId: number) => events.filter((e) => e.data.workItemId === workItemId).map((e) => e.type);

    before(async () => {
      t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", BOT_POLL_SECONDS: "1" });
      // The authority first holds every decision, so each item is announced as submitted.
      sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 600_000 });
      adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
      receiver = await startReceiver();
      a = await t.tenant(41);
      b = await t.tenant(42);
      ids.ok = await add(a, validWorkItem({ customerReference: "ok", webhookUrl: receiver.url }));
      ids.rejected = await add(a, validWorkItem({ customerReference: "rejected", senderChamberOfCommerceNo: { sendValue: "1234567" } }));
      // Its filing deadline has passed already: the bot flags it before it files it.
      ids.overdue = await add(a, validWorkItem({ customerReference: "overdue", exportDate: new Date(Date.now() + 3_600_000).toISOString(), webhookUrl: receiver.url }));
      ids.theirs = await add(b, validWorkItem({ customerReference: "theirs" }));
      assert.deepEqual(await run(), { batches: 2, submitted: 4, succeeded: 0, failed: 0, retried: 0 });
      await setConfig(sim, { decisionDelayMs: 0 });
      const later = () => new Date(Date.now() + 60_000);
      assert.deepEqual(await run(later), { batches: 2, submitted: 0, succeeded: 3, failed: 1, retried: 0 });
      const delivered = await createDispatcher({ store: t.store, config: t.config, owner: "dispatcher", clock: later }).deliverDue();
      assert.equal(delivered.delivered, 5, "ok: submitted + succeeded; overdue: deadline_at_risk + submitted + succeeded");
    });
    after(async () => {
      await receiver?.close();
      await adapter?.close();
      await sim?.close();
      await t?.close();
    });

    test("every event type is in the feed, oldest first, whether or not the item has a webhookUrl", async () => {
      const { events, nextCursor } = await feed(a, "?limit=500");
      assert.deepEqual(new Set(events.map((e) => e.type)), new Set(["workitem.submitted", "workitem.succeeded", "workitem.failed", "workitem.deadline_at_risk"]));
      assert.deepEqual(itemsOf(events, ids.ok), ["workitem.submitted", "workitem.succeeded"]);
      assert.deepEqual(itemsOf(events, ids.rejected), ["workitem.submitted", "workitem.failed"], "no webhookUrl, still in the feed");
      assert.deepEqual(itemsOf(events, ids.overdue), ["workitem.deadline_at_risk", "workitem.submitted", "workitem.succeeded"]);
      assert.equal(events.length, 7);
      // The view at the event, not now: the submitted event shows the item Submitted, without its decision.
      const statusAt = { "workitem.deadline_at_risk": "New", "workitem.submitted": "Submitted", "workitem.succeeded": "Successful", "workitem.failed": "Failed", "workitem.retried": "New", "workitem.changed": "Submitted", "workitem.withdrawn": "Withdrawn" };
      for (const event of events) {
        // Deadlines are flagged beside the filing, so a flagged item may be claimed already.
        const expected = event.type === "workitem.deadline_at_risk" && event.data.status === "InProgress" ? "InProgress" : statusAt[event.type];
        assert.equal(event.data.status, expected, `${event.type} of ${event.data.workItemId}`);
        assert.match(event.eventId, /^msg_[0-9a-f]{32}$/);
        assert.ok(!Number.isNaN(Date.parse(event.timestamp)) && event.timestamp.endsWith("Z"));
        assert.deepEqual(Object.keys(event), ["eventId", "type", "timestamp", "data"]);
      }
      const rejected = events.find((e) => e.type === "workitem.failed")!;
      assert.equal(rejected.data.error?.code, "AUTHORITY_REJECTED");
      assert.ok(rejected.data.authority.applicationNumber, "rejected at the decision: it keeps its application number");
      assert.equal(typeof nextCursor, "string");
      assert.deepEqual(await feed(a, `?after=${nextCursor}`), { events: [], nextCursor }, "polling with nextCursor: nothing newer yet");
    });

    test("eventId equals the webhook-id of the event's delivery", async () => {
      const { events } = await feed(a, "?limit=500");
      assert.equal(receiver.requests.length, 5);
      for (const request of receiver.requests) {
        const delivered = JSON.parse(request.body) as { type: string; timestamp: string; data: { workItemId: number } };
        const event = events.find((e) => e.eventId === request.headers["webhook-id"]);
        assert.ok(event, `the feed has the delivery ${String(request.headers["webhook-id"])}`);
        assert.deepEqual([event.type, event.timestamp, event.data.workItemId], [delivered.type, delivered.timestamp, delivered.data.workItemId]);
      }
      const hooked = events.filter((e) => e.data.webhookUrl !== null).map((e) => e.eventId).sort();
      assert.deepEqual(hooked, receiver.requests.map((r) => String(r.headers["webhook-id"])).sort(), "every event of an item with a webhookUrl was delivered under its id");
    });

    test("cursor paging: pages of limit join up to the whole feed, and polling returns only newer events", async () => {
      const all = (await feed(a, "?limit=500")).events;
      const paged: FeedEvent[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await feed(a, `?limit=2${cursor ? `&after=${cursor}` : ""}`);
        assert.ok(page.events.length <= 2);
        paged.push(...page.events);
        if (page.events.length === 0) {
          assert.equal(page.nextCursor, cursor, "an empty page keeps the cursor");
          break;
        }
        cursor = page.nextCursor;
      }
      assert.deepEqual(paged, all);
      assert.equal((await feed(a)).events.length, 7, "limit defaults to 100");

      // A new event after the cursor, and only it, comes back.
      const late = await add(a, validWorkItem({ customerReference: "late", exportDate: new Date(Date.now() + 3_600_000).toISOString() }));
      assert.equal(await t.store.flagDeadlinesAtRisk(a.companyId, { riskBefore: new Date(Date.now() + 86_400_000).toISOString(), now: new Date().toISOString() }), 1);
      const next = await feed(a, `?after=${cursor}`);
      assert.deepEqual(next.events.map((e) => [e.type, e.data.workItemId]), [["workitem.deadline_at_risk", late]]);
      assert.notEqual(next.nextCursor, cursor);
      assert.deepEqual((await feed(a, `?after=${next.nextCursor}`)).events, []);
    });

    test("filters: type, workItemId, both; another company's workItemId is an empty page", async () => {
      const all = (await feed(a, "?limit=500")).events;
      const submitted = await feed(a, "?type=workitem.submitted");
      assert.deepEqual(submitted.events, all.filter((e) => e.type === "workitem.submitted"));
      assert.equal(submitted.events.length, 3);
      const overdue = await feed(a, `?workItemId=${ids.overdue}`);
      assert.deepEqual(overdue.events, all.filter((e) => e.data.workItemId === ids.overdue));
      const both = await feed(a, `?workItemId=${ids.overdue}&type=workitem.succeeded`);
      assert.deepEqual(both.events.map((e) => [e.type, e.data.workItemId]), [["workitem.succeeded", ids.overdue]]);
      // Paging within a filter: the cursor of a filtered page skips what the filter left out.
      const first = await feed(a, "?type=workitem.submitted&limit=1");
      const second = await feed(a, `?type=workitem.submitted&limit=2&after=${first.nextCursor}`);
      assert.deepEqual([...first.events, ...second.events], submitted.events);
      const foreign = await feed(a, `?workItemId=${ids.theirs}`);
      assert.deepEqual(foreign.events, [], "another company's item: nothing, as for an unknown one");
      assert.deepEqual(await feed(a, "?workItemId=999999"), { events: [], nextCursor: foreign.nextCursor });
      // Query names bind case-insensitively, like every route (SPEC §1).
      assert.deepEqual((await feed(a, "?Type=workitem.failed&LIMIT=5")).events, all.filter((e) => e.type === "workitem.failed"));
    });

    test("an unknown type, a bad cursor or a limit out of range is a 400 problem naming the parameter", async () => {
      const cursorOfWorkItems = Buffer.from("v1:5").toString("base64url");
      const cases: Array<[string, string]> = [
        ["?type=workitem.created", "type"],
        ["?type=", "type"],
        ["?after=not-a-cursor", "after"],
        [`?after=${cursorOfWorkItems}`, "after"],
        [`?after=${Buffer.from("ev1:-1").toString("base64url")}`, "after"],
        [`?after=${Buffer.from("ev1:99999999999999999").toString("base64url")}`, "after"],
        ["?limit=0", "limit"],
        ["?limit=501", "limit"],
        ["?limit=ten", "limit"],
        ["?workItemId=0", "workItemId"],
      ];
      for (const [query, field] of cases) {
        const response = await t.app.inject({ method: "GET", url: `/api/Events${query}`, headers: bearer(a.token) });
        assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
        assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
        const body = problem(response);
        assert.equal(body.status, 400);
        assert.ok(body.errors && Object.keys(body.errors).includes(field), `${query}: errors name ${field}: ${JSON.stringify(body.errors)}`);
      }
      assert.equal((await feed(a, "?limit=500")).events.length > 0, true, "500 is in range");
    });

    test("the token decides the company: guarded like every route, and another company's events are invisible", async () => {
      await assertRouteIsGuarded(t, a, { method: "GET", url: "/api/Events" });
      const theirs = await feed(b, "?limit=500");
      assert.deepEqual(theirs.events.map((e) => [e.type, e.data.workItemId]), [["workitem.submitted", ids.theirs], ["workitem.succeeded", ids.theirs]]);
      const mine = (await feed(a, "?limit=500")).events;
      assert.ok(!mine.some((e) => e.data.workItemId === ids.theirs));
      assert.ok(!theirs.events.some((e) => mine.some((m) => m.eventId === e.eventId)));
      // A cursor names a position in the caller's own feed; another company's cursor shows nothing of theirs.
      const aCursor = (await feed(a, "?limit=1")).nextCursor;
      assert.ok((await feed(b, `?after=${aCursor}`)).events.every((e) => e.data.workItemId === ids.theirs));
    });
  });
}
