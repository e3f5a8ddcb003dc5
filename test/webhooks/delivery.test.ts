/**
 * Webhook delivery in one process: the bot's outcome goes to the outbox, the dispatcher sends
 * it over real HTTP to a local receiver, signed per Standard Webhooks.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import type { WorkItemView } from "../../src/domain/views.ts";
import { availableBackends } from "../helpers/backends.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { signatureHeaders as headersOf, withWebhooks } from "../helpers/webhook-harness.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

for (const backend of await availableBackends()) {
  describe(`webhook delivery [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("a Successful item's workitem.succeeded event arrives signed with the company's whsec_ secret", () =>
      withWebhooks(backend, {}, () => 204, async ({ receiver, complete, dispatcher, secret }) => {
        const item = await complete();
        assert.equal(item.status, "Successful");
        const summary = await dispatcher().deliverDue();
        assert.deepEqual([summary.delivered, summary.retried, summary.failed], [1, 0, 0]);
        const [request] = receiver.requests;
        assert.ok(request);
        assert.equal(request.method, "POST");
        assert.equal(request.path, "/hooks");
        assert.match(String(request.headers["content-type"]), /^application\/json/);
        assert.match(String(request.headers["webhook-id"]), /^msg_[0-9a-f]{32}$/);
        assert.ok(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000) < 30);
        assert.match(String(request.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]+=*$/);

        const whsec = await secret();
        assert.match(whsec, /^whsec_/);
        const event = new Webhook(whsec).verify(request.body, headersOf(request)) as { type: string; timestamp: string; data: WorkItemView };
        assert.equal(event.type, "workitem.succeeded");
        assert.equal(event.timestamp, item.completedAt);
        assert.deepEqual(event.data, item);
        assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(request.body, headersOf(request)), /signature/i);
        assert.throws(() => new Webhook(whsec).verify(request.body.replace("Successful", "Failed"), headersOf(request)));

        assert.deepEqual((await dispatcher().deliverDue()).deliveries, [], "delivered once, not again");
        assert.equal(receiver.requests.length, 1);
      }));

    test("a Failed item's workitem.failed event carries the error", () =>
      withWebhooks(backend, {}, () => 200, async ({ receiver, complete, dispatcher, secret }) => {
        const item = await complete(validWorkItem({ senderChamberOfCommerceNo: { sendValue: "1234567" } }));
        assert.equal(item.status, "Failed");
        await dispatcher().deliverDue();
        const event = new Webhook(await secret()).verify(receiver.requests[0]!.body, headersOf(receiver.requests[0]!)) as { type: string; data: WorkItemView };
        assert.equal(event.type, "workitem.failed");
        assert.deepEqual(event.data.error?.details.map((d) => d.field), ["senderChamberOfCommerceNo"]);
      }));

    test("a receiver answering 500 is retried with backoff and the same webhook-id until it accepts", () =>
      withWebhooks(backend, {}, (i) => (i < 2 ? 500 : 200), async ({ receiver, complete, dispatcher, secret }) => {
        await complete();
        const d = dispatcher();
        const first = await d.deliverDue();
        assert.deepEqual([first.retried, first.deliveries[0]?.httpStatus, first.deliveries[0]?.error], [1, 500, "the receiver answered 500"]);
        assert.deepEqual((await d.deliverDue()).deliveries, [], "not before the backoff");
        await sleep(100);
        assert.equal((await d.deliverDue()).retried, 1);
        await sleep(100);
        assert.equal((await d.deliverDue()).delivered, 1);
        const whsec = await secret();
        assert.equal(receiver.requests.length, 3);
        assert.equal(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size, 1, "one event, one webhook-id");
        for (const request of receiver.requests) new Webhook(whsec).verify(request.body, headersOf(request));
      }));

    test("after the retry window the delivery is given up and recorded as failed", () =>
      withWebhooks(backend, { WEBHOOK_RETRY_WINDOW_SECONDS: "1" }, () => 503, async ({ receiver, complete, dispatcher }) => {
        await complete();
        const d = dispatcher();
        const outcomes: string[] = [];
        await waitUntil(
          "the delivery to be given up",
          async () => {
            const summary = await d.deliverDue();
            outcomes.push(...summary.deliveries.map((r) => r.outcome));
            return summary.failed === 1 ? summary : undefined;
          },
          10_000,
          50,
        ).then((summary) => assert.match(summary.deliveries[0]!.error!, /^gave up after \d+ attempts: the receiver answered 503/));
        assert.ok(outcomes.filter((o) => o === "retried").length >= 2);
        const attempts = receiver.requests.length;
        await sleep(200);
        assert.deepEqual((await d.deliverDue()).deliveries, []);
        assert.equal(receiver.requests.length, attempts);
      }));

    test("redirects are not followed and timeouts count as failures", async () => {
      const elsewhere = await startReceiver(() => 200);
      try {
        await withWebhooks(
          backend,
          { WEBHOOK_TIMEOUT_MS: "300" },
          (i) => (i === 0 ? { status: 307, headers: { location: elsewhere.url } } : { status: 200, delayMs: 2000 }),
          async ({ receiver, complete, dispatcher }) => {
            await complete();
            const d = dispatcher();
            const redirected = await d.deliverDue();
            assert.deepEqual([redirected.retried, redirected.deliveries[0]?.httpStatus], [1, 307]);
            assert.equal(elsewhere.requests.length, 0, "the redirect target got nothing");
            await sleep(100);
            const slow = await d.deliverDue();
            assert.equal(slow.retried, 1);
            assert.match(slow.deliveries[0]!.error!, /timeout|abort/i);
            assert.equal(receiver.requests.length, 2);
          },
        );
      } finally {
        await elsewhere.close();
      }
    });

    test("a receiver that answers 200 and then trickles its body for ever is not delivered: the whole answer must arrive within the timeout", () =>
      withWebhooks(
        backend,
        { WEBHOOK_TIMEOUT_MS: "400" },
        (i) => (i === 0 ? { status: 200, trickleMs: 50 } : { status: 200, headers: { "content-type": "text/plain" } }),
        async ({ receiver, complete, dispatcher, t, tenant }) => {
          await complete();
          const d = dispatcher();
          const started = performance.now();
          const trickled = await d.deliverDue();
          assert.deepEqual([trickled.delivered, trickled.retried], [0, 1], JSON.stringify(trickled));
          assert.match(trickled.deliveries[0]!.error!, /^no answer: .*(timeout|abort)/i);
          assert.ok(performance.now() - started < 3000, "given up at the timeout, not when the receiver stops");
          await sleep(100);
          assert.equal((await d.deliverDue()).delivered, 1, "a receiver that finishes its answer is delivered");
          assert.equal(receiver.requests.length, 2);
          const listed = await t.app.inject({ url: "/api/Webhooks/Deliveries", headers: bearer(tenant.token) });
          const [delivery] = listed.json<{ deliveries: Array<{ status: string; attempts: Array<{ statusCode: number | null; error: string | null }> }> }>().deliveries;
          assert.equal(delivery?.status, "delivered");
          assert.deepEqual(delivery?.attempts.map((attempt) => attempt.statusCode), [null, 200], "the trickled attempt is recorded without a status, as no answer");
        },
      ));

    test("the connection goes to the address the guard checked, whatever the host name", () => {
      // .invalid never resolves in real DNS; only the lookups given to intake and the dispatcher know it.
      const pinned = async () => [{ address: "127.0.0.1", family: 4 as const }];
      return withWebhooks(
        backend,
        {},
        () => 200,
        async ({ receiver, complete, dispatcher }) => {
          const port = new URL(receiver.url).port;
          await complete(validWorkItem(), `http://pinned.invalid:${port}/hooks`);
          const summary = await dispatcher({ lookup: pinned }).deliverDue();
          assert.equal(summary.delivered, 1, JSON.stringify(summary));
          assert.equal(receiver.requests[0]?.headers.host, `pinned.invalid:${port}`);
        },
        { webhookLookup: pinned },
      );
    });

    test("start() polls and wake() delivers right away; stop() ends it", () =>
      withWebhooks(backend, { WEBHOOK_POLL_INTERVAL_MS: "60000" }, () => 200, async ({ receiver, complete, dispatcher }) => {
        const d = dispatcher();
        d.start();
        await sleep(50);
        await complete();
        d.wake();
        await receiver.waitForRequests(1, 5000);
        await d.stop();
        // Stopped: neither a wake-up nor its poll sends the next delivery, which waits for the next dispatcher.
        await complete();
        d.wake();
        await sleep(300);
        assert.equal(receiver.requests.length, 1, "a stopped dispatcher sends nothing more");
        const summary = await dispatcher().deliverDue();
        assert.equal(summary.delivered, 1, JSON.stringify(summary));
        assert.equal(receiver.requests.length, 2);
      }));
  });
}
