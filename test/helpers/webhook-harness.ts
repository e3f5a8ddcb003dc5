/**
 * Webhook delivery in one process, for the webhook tests: a test app on a fresh store, the
 * authority simulator over real HTTP, a receiver on loopback, items completed through the API and
 * the bot, and dispatchers that send to the receiver. Everything started is stopped at the end.
 */
import assert from "node:assert/strict";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { createAuthorityGate } from "../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import type { AppDeps } from "../../src/app.ts";
import { runBotOnce } from "../../src/bot/run-once.ts";
import type { WorkItemView } from "../../src/domain/views.ts";
import { createDispatcher, type Dispatcher, type DispatcherDeps } from "../../src/webhooks/dispatcher.ts";
import { createWebhookSecrets, type WebhookSecrets } from "../../src/webhooks/secrets.ts";
import type { Backend } from "./backends.ts";
import { bearer, createTestApp, validWorkItem, type TestApp, type Tenant } from "./test-app.ts";
import { startReceiver, type Answer, type Receiver } from "./webhook-receiver.ts";

export interface WebhookSetup {
  t: TestApp;
  tenant: Tenant;
  receiver: Receiver;
  /** Submits an item with the receiver (or `url`) as webhookUrl, for `tenant` (default the first), and runs the bot over it. */
  complete(body?: Record<string, unknown>, url?: string, tenant?: Tenant): Promise<WorkItemView>;
  dispatcher(overrides?: Partial<DispatcherDeps>): Dispatcher;
  /** The companies' signing secrets, as the dispatcher reads them. */
  secrets: WebhookSecrets;
  /** The first tenant's current secret. */
  secret(): Promise<string>;
}

/** Fast retries, loopback receivers allowed. */
export const WEBHOOK_TEST_ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_BASE_MS: "40", WEBHOOK_RETRY_MAX_MS: "80", WEBHOOK_TIMEOUT_MS: "1000" };

/** `appDeps` go to the test app, e.g. the resolver intake checks webhook hosts with. */
export async function withWebhooks(
  backend: Backend,
  env: Record<string, string>,
  answer: (index: number) => Answer,
  body: (s: WebhookSetup) => Promise<void>,
  appDeps: Omit<AppDeps, "store"> = {},
): Promise<void> {
  const t = await createTestApp(backend, { ...WEBHOOK_TEST_ENV, ...env }, appDeps);
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
  const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
  const receiver = await startReceiver(answer);
  const started: Dispatcher[] = [];
  try {
    const first = await t.tenant(11);
    const secrets = createWebhookSecrets(t.store, t.config);
    await body({
      t,
      tenant: first,
      receiver,
      async complete(item = validWorkItem(), url = receiver.url, tenant = first) {
        const response = await t.app.inject({
          method: "POST",
          url: "/api/AuthorityRvdm/AddWorkItemCreate",
          headers: bearer(tenant.token),
          payload: { ...item, webhookUrl: url },
        });
        assert.equal(response.statusCode, 200, response.body);
        await runBotOnce({ store: t.store, gate: createAuthorityGate({ store: t.store, adapter, config: t.config, owner: "bot" }), config: t.config, owner: "bot" });
        return (await t.app.inject({ method: "GET", url: `/api/AuthorityRvdm/WorkItem/${response.json().workItemId}`, headers: bearer(tenant.token) })).json();
      },
      dispatcher(overrides = {}) {
        const dispatcher = createDispatcher({ store: t.store, config: t.config, owner: "dispatcher", ...overrides });
        started.push(dispatcher);
        return dispatcher;
      },
      secrets,
      secret: async () => (await secrets.current(first.companyId))!,
    });
  } finally {
    for (const dispatcher of started) await dispatcher.stop();
    await receiver.close();
    await adapter.close();
    await sim.close();
    await t.close();
  }
}

/** The three Standard Webhooks headers of a received request, as verifiers take them. */
export const signatureHeaders = (request: { headers: Record<string, unknown> }) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"]),
});
