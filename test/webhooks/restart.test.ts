/**
 * Deliveries survive restarts, with real processes, per backend: the embedded setup (ROLE=all,
 * built-in authority simulator) files an item and its webhook fails with a 500; the process is
 * SIGKILLed; a new process delivers the same event, signed, to the receiver.
 *
 * The receiver refuses every request until the first process is gone, so however slow the
 * machine (and however often that process retried meanwhile), the delivery is the new one's.
 */
import { registrationOf } from "../../src/domain/views.ts";
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { createKey } from "../../src/admin/admin.ts";
import { openStore } from "../../src/store/open-store.ts";
import { createWebhookSecrets } from "../../src/webhooks/secrets.ts";
import { availableBackends } from "../helpers/backends.ts";
import { startServer, stopAll } from "../helpers/processes.ts";
import { metricValue } from "../helpers/prometheus.ts";
import { TEST_JWT_SECRET, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

after(() => stopAll());

for (const backend of await availableBackends()) {
  test(`[${backend.name}] a webhook that failed before a crash is delivered by the next process, with the same webhook-id`, { timeout: HANG_TIMEOUT_MS }, async () => {
    let firstProcessGone = false;
    const receiver = await startReceiver(() => (firstProcessGone ? 200 : 500));
    const db = await backend.create();
    const store = await openStore(db.location);
    try {
      const tenant = await createKey(store, { companyId: 31 });
      const env = {
        DATABASE_URL: db.databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        BOT_SCHEDULE: "* * * * * *",
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        WEBHOOK_RETRY_BASE_MS: "3000",
        WEBHOOK_RETRY_MAX_MS: "3000",
        WEBHOOK_LEASE_SECONDS: "3",
        WEBHOOK_TIMEOUT_MS: "2000",
        WEBHOOK_POLL_INTERVAL_MS: "200",
      };
      const first = await startServer({ ...env, ROLE: "all" });
      const post = async <T>(path: string, body: unknown, token?: string): Promise<T> => {
        const response = await fetch(`${first.baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        });
        assert.equal(response.status, 200, await response.clone().text());
        return (await response.json()) as T;
      };
      const { bearerToken } = await post<{ bearerToken: string }>("/api/Login/Authenticate", { apiKey: tenant.apiKey, secret: tenant.secret });
      const { workItemId } = await post<{ workItemId: number }>("/api/AuthorityRvdm/AddWorkItemCreate", validWorkItem({ webhookUrl: receiver.url }), bearerToken);

      await receiver.waitForRequests(1);
      const metrics = await (await fetch(`${first.baseUrl}/metrics`)).text();
      assert.equal(metricValue(metrics, "work_item_api_outbox_backlog"), 1, "the gauge reads the real outbox: one event waits for its retry");
      await first.kill();
      firstProcessGone = true;
      const failedAttempts = receiver.requests.length;
      assert.equal((await store.getWorkItem(31, workItemId))?.status, "Successful", "the built-in simulator registered the item");

      const second = await startServer({ ...env, ROLE: "worker" });
      await receiver.waitForRequests(failedAttempts + 1);
      assert.equal((await second.stop()).code, 0);

      assert.equal(receiver.requests.length, failedAttempts + 1, "the first process's failed attempts, then one delivery");
      const failed = receiver.requests.slice(0, failedAttempts);
      const delivered = receiver.requests[failedAttempts]!;
      assert.deepEqual(failed.map((request) => request.status), failed.map(() => 500));
      assert.equal(delivered.status, 200);
      for (const attempt of failed) assert.equal(delivered.headers["webhook-id"], attempt.headers["webhook-id"]);
      // The same generated data encryption key as the server processes: the store keeps it.
      const secret = (await createWebhookSecrets(store, { dataEncryptionKey: undefined, webhookSecretOverlapSeconds: 86_400 }).current(31))!;
      const event = new Webhook(secret).verify(delivered.body, {
        "webhook-id": String(delivered.headers["webhook-id"]),
        "webhook-timestamp": String(delivered.headers["webhook-timestamp"]),
        "webhook-signature": String(delivered.headers["webhook-signature"]),
      }) as { type: string; data: { workItemId: number; status: string; result: { registrationNumber: string } } };
      assert.equal(event.type, "workitem.succeeded");
      assert.equal(event.data.workItemId, workItemId);
      assert.equal(event.data.result.registrationNumber, registrationOf((await store.getWorkItem(31, workItemId))!)?.registrationNumber);
    } finally {
      await stopAll();
      await store.close();
      await receiver.close();
      await db.cleanup();
    }
  });
}
