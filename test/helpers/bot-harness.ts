/**
 * The bot end to end in one process, for the bot's tests: a test app on a fresh store, the
 * authority simulator over real HTTP, items added and read through the API, runs of runBotOnce.
 */
import assert from "node:assert/strict";
import { startAuthoritySim, type AuthoritySim } from "../../src/authority-sim/server.ts";
import type { AuthorityAdapter } from "../../src/authority/protocol.ts";
import { createAuthorityGate, type AuthorityGate } from "../../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { runBotOnce, type BotCounts, type BotEvents } from "../../src/bot/run-once.ts";
import type { WorkBatchView, WorkItemView } from "../../src/domain/views.ts";
import type { Backend } from "./backends.ts";
import { assertJsonViewsMatch } from "./json-views.ts";
import { bearer, createTestApp, type TestApp, type Tenant } from "./test-app.ts";

export interface Setup {
  t: TestApp;
  sim: AuthoritySim;
  tenant: Tenant;
  add(body: Record<string, unknown>): Promise<{ workBatchId: number; workItemId: number }>;
  item(id: number): Promise<WorkItemView>;
  batch(id: number): Promise<WorkBatchView>;
  /** One bot pass, by default through a fresh gate (as a new `bot run-once` process would). */
  run(options?: RunOptions): Promise<BotCounts>;
}

export interface RunOptions {
  adapter?: AuthorityAdapter;
  gate?: AuthorityGate;
  signal?: AbortSignal;
  clock?: () => Date;
  /** The schedule's next pass, as a scheduled worker has one (`bot run-once` has none). */
  nextPassAt?: () => Date | null;
  afterLap?: () => Promise<void>;
  events?: BotEvents;
}

export async function withBot(backend: Backend, env: Record<string, string>, body: (s: Setup) => Promise<void>): Promise<void> {
  const t = await createTestApp(backend, { BOT_RETRY_BASE_MS: "20", BOT_RETRY_MAX_MS: "40", ...env });
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: Number(env.AUTHORITY_SIM_DECISION_DELAY_MS ?? 0) });
  const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
  try {
    const tenant = await t.tenant(7);
    const get = async (url: string) => {
      const response = await t.app.inject({ method: "GET", url, headers: bearer(tenant.token) });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    };
    await body({
      t,
      sim,
      tenant,
      async add(item) {
        const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: item });
        assert.equal(response.statusCode, 200, response.body);
        return response.json();
      },
      item: (id) => get(`/api/AuthorityRvdm/WorkItem/${id}`),
      batch: (id) => get(`/api/AuthorityRvdm/WorkBatch/${id}`),
      run: (options = {}) =>
        runBotOnce({
          store: t.store,
          gate: options.gate ?? createAuthorityGate({ store: t.store, adapter: options.adapter ?? adapter, config: t.config, owner: "test-worker", ...(options.clock ? { clock: options.clock } : {}) }),
          config: t.config,
          owner: "test-worker",
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.nextPassAt ? { nextPassAt: options.nextPassAt } : {}),
          ...(options.afterLap ? { afterLap: options.afterLap } : {}),
          ...(options.events ? { events: options.events } : {}),
        }),
    });
    // Whatever the scenario left, in every state and kind: the read routes answer it as the views are.
    await assertJsonViewsMatch(t.store, tenant.companyId);
  } finally {
    await adapter.close();
    await sim.close();
    await t.close();
  }
}

export const setConfig = (sim: AuthoritySim, patch: Record<string, unknown>) =>
  fetch(`${sim.url}/_sim/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(patch) }).then((r) => r.json());


/**
 * One bot pass over `t`'s store against a simulator of its own, started and stopped here: every
 * New item is decided, and each decision of an item with a webhookUrl becomes a webhook delivery.
 */
export async function runOneBotPass(t: TestApp, clock?: () => Date): Promise<BotCounts> {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
  const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
  try {
    return await runBotOnce({ store: t.store, gate: createAuthorityGate({ store: t.store, adapter, config: t.config, owner: "bot" }), config: t.config, owner: "bot", ...(clock ? { clock } : {}) });
  } finally {
    await adapter.close();
    await sim.close();
  }
}
