/**
 * An item erased while a worker holds it (SPEC §22: a company erased, or an item swept): the
 * bot's filing and status calls and the webhook dispatcher's attempt find it gone, record nothing
 * and go on, on both stores. The rows go through the erase's own delete steps, its draining
 * skipped, which is the worst an erase can do to a worker.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AuthorityAdapter } from "../../src/authority/protocol.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import type { Store } from "../../src/store/store.ts";
import { availableBackends } from "../helpers/backends.ts";
import { withBot } from "../helpers/bot-harness.ts";
import { claimDueDeliveries } from "../helpers/sweeps.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { withWebhooks } from "../helpers/webhook-harness.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** Every row of the company gone at once, as an erase's deleting phase leaves it. */
async function deleteEverything(store: Store, companyId: number): Promise<void> {
  const now = new Date().toISOString();
  await store.beginCompanyErasure(companyId, { operator: { operatorId: "test", email: "test" }, reason: "under the worker", at: now });
  await store.revokeCompanyKeys(companyId, now);
  await store.beginDeletingCompany(companyId);
  while (await store.deleteCompanyRows(companyId, 1000));
}

const countItems = async (store: Store, companyId: number) => (await store.listWorkItems(companyId, { limit: 100 })).length;

for (const backend of await availableBackends()) {
  describe(`items that vanish under a worker [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("a pass whose claimed items are erased during their calls ends, recording nothing of them", () =>
      withBot(backend, {}, async (s) => {
        for (let i = 0; i < 3; i++) await s.add(validWorkItem({ customerReference: `V${i}` }));
        const inner = createHttpAuthorityAdapter({ baseUrl: s.sim.url, timeoutMs: 2000 });
        // The first call erases everything; every call (they run at once) waits for that, then answers.
        let erased: Promise<void> | undefined;
        const adapter: AuthorityAdapter = {
          ...inner,
          name: inner.name,
          submit: async (submission, span) => {
            await (erased ??= deleteEverything(s.t.store, s.tenant.companyId));
            return inner.submit(submission, span);
          },
          status: (applicationNumber, span) => inner.status(applicationNumber, span),
          close: () => inner.close(),
        };
        try {
          const counts = await s.run({ adapter });
          assert.equal(counts.submitted, 0, "no outcome recorded for an item that is gone");
          assert.equal(await countItems(s.t.store, s.tenant.companyId), 0);
        } finally {
          await inner.close();
        }
      }));

    test("a status request about an item erased meanwhile records nothing, and the next pass has nothing of it", () =>
      withBot(backend, { AUTHORITY_SIM_DECISION_DELAY_MS: "60000" }, async (s) => {
        await s.add(validWorkItem());
        const first = await s.run();
        assert.equal(first.submitted, 1);
        const inner = createHttpAuthorityAdapter({ baseUrl: s.sim.url, timeoutMs: 2000 });
        let erased = false;
        const adapter: AuthorityAdapter = {
          ...inner,
          name: inner.name,
          submit: (submission, span) => inner.submit(submission, span),
          status: async (applicationNumber, span) => {
            if (!erased) {
              erased = true;
              await deleteEverything(s.t.store, s.tenant.companyId);
            }
            return inner.status(applicationNumber, span);
          },
          close: () => inner.close(),
        };
        try {
          // The item's first status request is due at once only with a clock past it: ask as if later.
          const later = () => new Date(Date.now() + 3_600_000);
          await s.run({ adapter, clock: later });
          assert.ok(erased, "the status request was made");
          assert.deepEqual(await s.run({ adapter, clock: later }), { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 });
        } finally {
          await inner.close();
        }
      }));
  });

  describe(`a delivery that vanishes under the dispatcher [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("its attempt is not recorded, and nothing fails", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        await s.complete();
        const [delivery] = await claimDueDeliveries(s.t.store, { owner: "d", now: new Date().toISOString(), leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(), limit: 10 });
        assert.ok(delivery);
        await deleteEverything(s.t.store, s.tenant.companyId);
        assert.equal(await s.t.store.recordWebhookAttempt(delivery, "d", { kind: "delivered", httpStatus: 204 }, { at: new Date().toISOString(), durationMs: 5 }), false);
        assert.deepEqual(await s.t.query("SELECT * FROM webhook_delivery_attempts"), []);
      }));
  });
}
