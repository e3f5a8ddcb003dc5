/**
 * GET /api/Webhooks/Deliveries and POST …/{deliveryId}/Redeliver (SPEC §11.3), on each store,
 * against a real receiver on loopback: every attempt is recorded (when, status or error, how
 * long), the list filters and pages newest first, a redelivery of a delivered and of a failed
 * delivery makes one new attempt with the same webhook-id and a fresh signature, and another
 * company sees none of it.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import type { WebhookDeliveryPage, WebhookDeliveryView } from "../../../src/webhooks/delivery-schema.ts";
import { assertForeignIdIsNotFound, assertRouteIsGuarded } from "../../helpers/auth-matrix.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { bearer, problem, validWorkItem, type Tenant } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../../helpers/waiting.ts";
import { signatureHeaders, withWebhooks, type WebhookSetup } from "../../helpers/webhook-harness.ts";

const LIST = "/api/Webhooks/Deliveries";
const redeliverUrl = (deliveryId: number) => `/api/Webhooks/Deliveries/${deliveryId}/Redeliver`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function list(s: WebhookSetup, query = "", tenant: Tenant = s.tenant): Promise<WebhookDeliveryPage> {
  const response = await s.t.app.inject({ url: `${LIST}${query ? `?${query}` : ""}`, headers: bearer(tenant.token) });
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers["content-type"]), /^application\/json; charset=utf-8/);
  return response.json<WebhookDeliveryPage>();
}

const redeliver = (s: WebhookSetup, deliveryId: number, tenant: Tenant = s.tenant) =>
  s.t.app.inject({ method: "POST", url: redeliverUrl(deliveryId), headers: bearer(tenant.token) });

/** Runs dispatcher passes until `done` holds (retries wait for their backoff). */
async function deliverUntil(s: WebhookSetup, done: () => boolean, what: string): Promise<void> {
  const dispatcher = s.dispatcher();
  await waitUntil(what, async () => (await dispatcher.deliverDue(), done()), 10_000, 30);
}

for (const backend of await availableBackends()) {
  describe(`webhook deliveries [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("every attempt is recorded: a receiver failing twice, then accepting", () =>
      withWebhooks(backend, {}, (i) => (i < 2 ? 500 : 204), async (s) => {
        const item = await s.complete();
        const [pending] = (await list(s)).deliveries;
        assert.ok(pending);
        assert.deepEqual(
          { ...pending, deliveryId: 0, eventId: "", createdAt: "", nextAttemptAt: "" },
          { deliveryId: 0, eventId: "", workItemId: item.workItemId, type: "workitem.succeeded", url: s.receiver.url, status: "pending", attempts: [], nextAttemptAt: "", createdAt: "" },
        );
        assert.match(pending.eventId, /^msg_[0-9a-f]{32}$/);
        assert.equal(pending.createdAt, item.completedAt);
        assert.match(pending.nextAttemptAt!, ISO);

        const dispatcher = s.dispatcher();
        await dispatcher.deliverDue();
        const [afterOne] = (await list(s)).deliveries;
        assert.equal(afterOne!.status, "pending");
        assert.equal(afterOne!.attempts.length, 1);
        assert.ok(Date.parse(afterOne!.nextAttemptAt!) > Date.parse(afterOne!.attempts[0]!.at), "the retry waits for its backoff");

        await deliverUntil(s, () => s.receiver.requests.length === 3, "the third attempt");
        const [delivered] = (await list(s)).deliveries;
        assert.equal(delivered!.status, "delivered");
        assert.equal(delivered!.nextAttemptAt, null);
        assert.equal(delivered!.deliveryId, pending.deliveryId);
        assert.deepEqual(
          delivered!.attempts.map(({ statusCode, error }) => ({ statusCode, error })),
          [
            { statusCode: 500, error: "the receiver answered 500" },
            { statusCode: 500, error: "the receiver answered 500" },
            { statusCode: 204, error: null },
          ],
        );
        for (const attempt of delivered!.attempts) {
          assert.match(attempt.at, ISO);
          assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0 && attempt.durationMs < 5000, JSON.stringify(attempt));
        }
        const times = delivered!.attempts.map((attempt) => Date.parse(attempt.at));
        assert.deepEqual(times, [...times].sort((a, b) => a - b), "oldest first");
        assert.equal(new Set(s.receiver.requests.map((r) => r.headers["webhook-id"])).size, 1);
        assert.equal(s.receiver.requests[0]!.headers["webhook-id"], delivered!.eventId, "eventId is the webhook-id");
      }));

    test("a receiver that does not answer is recorded with no status and the error", () =>
      withWebhooks(backend, { WEBHOOK_TIMEOUT_MS: "200" }, () => ({ status: 200, delayMs: 1000 }), async (s) => {
        await s.complete();
        await s.dispatcher().deliverDue();
        const [delivery] = (await list(s)).deliveries;
        const [attempt] = delivery!.attempts;
        assert.equal(attempt!.statusCode, null);
        assert.match(attempt!.error!, /^no answer: .*(timeout|abort)/i);
        assert.ok(attempt!.durationMs >= 150, `the attempt took its timeout (${attempt!.durationMs} ms)`);
      }));

    test("a secret that cannot be decrypted (another DATA_ENCRYPTION_KEY) is an attempt with the reason, retried, and nothing is sent", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        await s.secret();
        await s.complete();
        const wrongKey = { ...s.t.config, dataEncryptionKey: "not-the-key-these-secrets-were-encrypted-with" };
        const summary = await s.dispatcher({ config: wrongKey }).deliverDue();
        assert.equal(summary.retried, 1);
        assert.equal(s.receiver.requests.length, 0);
        const [delivery] = (await list(s)).deliveries;
        assert.equal(delivery!.status, "pending");
        assert.equal(delivery!.attempts[0]!.statusCode, null);
        assert.match(delivery!.attempts[0]!.error!, /^the company's webhook secret cannot be read: .*encrypted with another key/);
      }));

    test("the list filters by status and work item, newest first, with a keyset cursor", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const items = [];
        for (let i = 0; i < 3; i++) items.push(await s.complete(validWorkItem({ customerReference: `D-${i}` })));
        await s.dispatcher().deliverDue();
        // A target the address guard refuses fails at once, without retries.
        const failing = await s.complete(validWorkItem({ customerReference: "D-refused" }), "http://127.0.0.1:9/hooks");
        await s.dispatcher({ config: { ...s.t.config, webhookAllowPrivateNetworks: false } }).deliverDue();
        const stillPending = await s.complete(validWorkItem({ customerReference: "D-pending" }));

        const all = await list(s);
        assert.equal(all.nextCursor, null);
        const ids = all.deliveries.map((d) => d.deliveryId);
        assert.deepEqual(ids, [...ids].sort((a, b) => b - a), "newest first");
        const newestFirst = [stillPending, failing, items[2]!, items[1]!, items[0]!];
        assert.deepEqual(all.deliveries.map((d) => d.workItemId), newestFirst.map((i) => i.workItemId));
        assert.deepEqual(all.deliveries.map((d) => d.status), ["pending", "failed", "delivered", "delivered", "delivered"]);

        const byStatus = async (status: string) => (await list(s, `status=${status}`)).deliveries.map((d) => d.workItemId);
        assert.deepEqual(await byStatus("delivered"), [items[2]!, items[1]!, items[0]!].map((i) => i.workItemId));
        assert.deepEqual(await byStatus("failed"), [failing.workItemId]);
        assert.deepEqual(await byStatus("pending"), [stillPending.workItemId]);
        assert.deepEqual(await byStatus("pending&workItemId=" + failing.workItemId), [], "filters combine");
        const refused = (await list(s, `workItemId=${failing.workItemId}`)).deliveries;
        assert.equal(refused.length, 1);
        assert.equal(refused[0]!.status, "failed");
        assert.match(refused[0]!.attempts[0]!.error!, /^refused: .*loopback/);
        assert.equal(refused[0]!.nextAttemptAt, null);

        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: WebhookDeliveryPage = await list(s, `limit=2${cursor ? `&cursor=${cursor}` : ""}`);
          seen.push(...page.deliveries.map((d) => d.deliveryId));
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== null);
        assert.deepEqual(seen, ids);
        assert.equal(pages, 3);
        const filteredPage = await list(s, "status=delivered&limit=1");
        assert.equal(filteredPage.deliveries.length, 1);
        const next = await list(s, `status=delivered&limit=5&cursor=${filteredPage.nextCursor}`);
        assert.deepEqual(next.deliveries.map((d) => d.workItemId), [items[1]!, items[0]!].map((i) => i.workItemId));
        assert.deepEqual((await list(s, "Status=delivered&LIMIT=1")).deliveries.length, 1, "query names bind case-insensitively");
      }));

    test("bad status, limit, cursor or workItemId: 400 problem+json naming the field", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const cases: Array<[string, string]> = [
          ["status=Delivered", "status"],
          ["status=bogus", "status"],
          ["limit=0", "limit"],
          ["limit=201", "limit"],
          ["limit=ten", "limit"],
          ["cursor=not-a-cursor", "cursor"],
          [`cursor=${Buffer.from("v1:-4").toString("base64url")}`, "cursor"],
          ["workItemId=0", "workItemId"],
        ];
        for (const [query, field] of cases) {
          const response = await s.t.app.inject({ url: `${LIST}?${query}`, headers: bearer(s.tenant.token) });
          assert.equal(response.statusCode, 400, query);
          assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
          assert.deepEqual(Object.keys(problem(response).errors ?? {}), [field], query);
        }
        for (const id of ["0", "abc", "1.5"]) {
          const response = await s.t.app.inject({ method: "POST", url: `/api/Webhooks/Deliveries/${id}/Redeliver`, headers: bearer(s.tenant.token) });
          assert.equal(response.statusCode, 400, id);
          assert.deepEqual(Object.keys(problem(response).errors ?? {}), ["deliveryId"]);
        }
      }));

    test("redelivering a delivered delivery: 202, one new attempt with the same webhook-id and a fresh signature", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        await s.complete();
        await s.dispatcher().deliverDue();
        const [delivered] = (await list(s)).deliveries;
        assert.equal(delivered!.status, "delivered");
        await sleep(1100); // so that the fresh timestamp differs by at least a second

        const response = await redeliver(s, delivered!.deliveryId);
        assert.equal(response.statusCode, 202, response.body);
        const due = response.json<WebhookDeliveryView>();
        assert.equal(due.status, "pending");
        assert.equal(due.deliveryId, delivered!.deliveryId);
        assert.equal(due.attempts.length, 1);
        assert.ok(Date.parse(due.nextAttemptAt!) <= Date.now());

        await s.dispatcher().deliverDue();
        assert.equal(s.receiver.requests.length, 2);
        const [first, again] = s.receiver.requests as [(typeof s.receiver.requests)[0], (typeof s.receiver.requests)[0]];
        assert.equal(again.headers["webhook-id"], first.headers["webhook-id"]);
        assert.ok(Number(again.headers["webhook-timestamp"]) > Number(first.headers["webhook-timestamp"]), "a fresh timestamp");
        assert.notEqual(again.headers["webhook-signature"], first.headers["webhook-signature"], "a fresh signature");
        assert.equal(again.body, first.body, "the same event");
        new Webhook(await s.secret()).verify(again.body, signatureHeaders(again));
        const [after] = (await list(s)).deliveries;
        assert.equal(after!.status, "delivered");
        assert.equal(after!.attempts.length, 2);
        assert.deepEqual((await s.dispatcher().deliverDue()).deliveries, [], "one new attempt, not more");
      }));

    test("redelivering a failed delivery makes one new attempt even after the retry window", () => {
      let receiverUp = false;
      return withWebhooks(backend, { WEBHOOK_RETRY_WINDOW_SECONDS: "1" }, () => (receiverUp ? 200 : 503), async (s) => {
        await s.complete();
        await s.dispatcher().deliverDue();
        await sleep(1100);
        await deliverUntil(s, () => s.receiver.requests.length >= 2, "the attempt after the window");
        const [failed] = (await list(s, "status=failed")).deliveries;
        assert.ok(failed, "given up after the window");
        assert.match(failed.attempts[failed.attempts.length - 1]!.error!, /^gave up after 2 attempts: the receiver answered 503/);
        await sleep(100);
        assert.equal((await s.dispatcher().deliverDue()).deliveries.length, 0, "a failed delivery is not attempted again by itself");

        receiverUp = true;
        assert.equal((await redeliver(s, failed.deliveryId)).statusCode, 202);
        assert.equal((await s.dispatcher().deliverDue()).delivered, 1);
        const [delivered] = (await list(s, `workItemId=${failed.workItemId}`)).deliveries;
        assert.equal(delivered!.status, "delivered");
        assert.deepEqual(delivered!.attempts.map((attempt) => attempt.statusCode), [503, 503, 200]);
        assert.equal(s.receiver.requests.length, 3);
        assert.equal(s.receiver.requests[2]!.headers["webhook-id"], failed.eventId);
      });
    });

    test("a redelivery whose attempt fails after the window ends failed again, without retries", () =>
      withWebhooks(backend, { WEBHOOK_RETRY_WINDOW_SECONDS: "1" }, () => 503, async (s) => {
        await s.complete();
        await sleep(1100);
        await s.dispatcher().deliverDue();
        const [failed] = (await list(s, "status=failed")).deliveries;
        assert.equal(failed!.attempts.length, 1);
        assert.equal((await redeliver(s, failed!.deliveryId)).statusCode, 202);
        assert.equal((await s.dispatcher().deliverDue()).failed, 1);
        const [again] = (await list(s)).deliveries;
        assert.deepEqual([again!.status, again!.attempts.length], ["failed", 2]);
      }));

    test("unknown and foreign ids are 404 alike; lists never show another company's deliveries", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const other = await s.t.tenant(12);
        const mine = await s.complete();
        const theirs = await s.complete(validWorkItem({ customerReference: "THEIRS" }), undefined, other);
        await s.dispatcher().deliverDue();
        const [delivery] = (await list(s)).deliveries;
        assert.equal(delivery!.workItemId, mine.workItemId);

        await assertForeignIdIsNotFound(s.t, other, { method: "POST", url: redeliverUrl(delivery!.deliveryId) }, redeliverUrl(987_654_321));
        assert.equal((await list(s)).deliveries[0]!.status, "delivered", "the foreign redelivery changed nothing");

        const theirList = await list(s, "", other);
        assert.deepEqual(theirList.deliveries.map((d) => d.workItemId), [theirs.workItemId]);
        assert.deepEqual((await list(s, `workItemId=${mine.workItemId}`, other)).deliveries, [], "another company's workItemId: an empty page");
        for (const status of ["pending", "delivered", "failed"]) {
          assert.ok((await list(s, `status=${status}&limit=200`, other)).deliveries.every((d) => d.workItemId === theirs.workItemId));
        }
      }));

    test("both routes are behind the bearer guard", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        await assertRouteIsGuarded(s.t, s.tenant, { method: "GET", url: LIST });
        await assertRouteIsGuarded(s.t, s.tenant, { method: "POST", url: redeliverUrl(1) });
      }));
  });
}
