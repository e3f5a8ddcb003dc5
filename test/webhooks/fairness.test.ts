/**
 * Issue 24, defect 3: one company's hanging receiver must not stall every company's webhooks.
 * Company A has 100 deliveries to a receiver that never answers; company B's one delivery to a
 * fast receiver still arrives within 5 s of its decision (the dispatcher running as in a worker,
 * with the default timeout and concurrency). And a claim's lease outlives the work it covers:
 * a second dispatcher never sends a delivery the first still has in flight.
 */
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { addItems } from "../helpers/store-items.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { withWebhooks } from "../helpers/webhook-harness.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

const NEVER_ANSWERS = { status: 200, delayMs: 600_000 };

for (const backend of await availableBackends()) {
  describe(`webhook fairness between companies [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("B's delivery arrives within 5 s of its decision while A's 100 deliveries hang", () =>
      // The defaults that matter: WEBHOOK_TIMEOUT_MS 15 s, WEBHOOK_CONCURRENCY 8, WEBHOOK_COMPANY_MAX_IN_FLIGHT 7.
      withWebhooks(backend, { WEBHOOK_TIMEOUT_MS: "15000", WEBHOOK_RETRY_BASE_MS: "60000", WEBHOOK_RETRY_MAX_MS: "60000" }, () => NEVER_ANSWERS, async ({ t, tenant, receiver, complete, dispatcher }) => {
        const fast = await startReceiver(() => 204);
        try {
          await addItems(t.store, tenant.companyId, 99, receiver.url);
          await complete();
          // One bot pass decides (nearly) all of them; what matters is a backlog far beyond A's cap.
          assert.ok((await t.store.countPendingWebhookDeliveries()) >= 90);
          const running = dispatcher();
          running.start();
          await receiver.waitForRequests(1);
          await sleep(500);
          const hanging = receiver.requests.length;
          assert.ok(hanging >= 1 && hanging <= 7, `A has at most its cap in flight, not every slot: ${hanging}`);

          const companyB = await t.tenant(12);
          const decided = await complete(validWorkItem({ customerReference: "company-b" }), fast.url, companyB);
          assert.equal(decided.status, "Successful");
          const decidedAt = Date.now();
          running.wake();
          const [request] = await fast.waitForRequests(1, 10_000);
          const waited = Date.now() - decidedAt;
          assert.ok(waited < 5000, `B delivered ${waited} ms after its decision`);
          assert.match(request!.body, /company-b/);
          assert.ok(receiver.requests.length <= 7, `A still has no more than its cap in flight: ${receiver.requests.length}`);
        } finally {
          await fast.close();
        }
      }));

    test("two dispatchers never send one delivery twice, though each attempt outlasts WEBHOOK_LEASE_SECONDS's share of a claim", () =>
      withWebhooks(
        backend,
        // A lease just over the timeout, long retries: any webhook-id seen twice would be a delivery taken over while in flight.
        { WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_LEASE_SECONDS: "3", WEBHOOK_RETRY_BASE_MS: "600000", WEBHOOK_RETRY_MAX_MS: "600000", WEBHOOK_COMPANY_MAX_IN_FLIGHT: "16" },
        () => NEVER_ANSWERS,
        async ({ t, tenant, receiver, complete, dispatcher }) => {
          await addItems(t.store, tenant.companyId, 39, receiver.url);
          await complete();
          const first = dispatcher({ owner: "first" });
          const second = dispatcher({ owner: "second" });
          first.start();
          await sleep(200);
          second.start();
          // Three rounds of timeouts: every row is attempted by now, most of them once the first claims' leases would have run out.
          await waitUntil("every delivery attempted", async () => ((await t.store.countPendingWebhookDeliveries()) > 0 && receiver.requests.length >= 40 ? true : undefined), 30_000, 100);
          await sleep(500);
          const ids = receiver.requests.map((request) => String(request.headers["webhook-id"]));
          assert.equal(new Set(ids).size, ids.length, `each delivery sent once: ${ids.length} requests for ${new Set(ids).size} deliveries`);
        },
      ));
  });
}
