/**
 * Webhook deliveries are deleted with their attempts 30 days after they ended (SPEC §13), by a
 * sweep bounded per pass, company by company, that keeps pending deliveries and recent ones, on
 * both stores.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DELIVERY_RETENTION_SECONDS, sweepEndedDeliveries } from "../../src/retention/delivery-sweep.ts";
import { availableBackends } from "../helpers/backends.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { withWebhooks } from "../helpers/webhook-harness.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

// Every statement the sweep sends must name its company (checked at the end).
recordStoreStatements();

const DAY = 86_400_000;

for (const backend of await availableBackends()) {
  describe(`webhook delivery retention sweep [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("deletes deliveries ended 30 days ago with their attempts, at most maxRows a pass, and keeps the rest", () =>
      withWebhooks(backend, {}, (i) => (i === 0 ? 500 : 204), async (s) => {
        const other = await s.t.tenant(12);
        // Company 11: one delivery with two attempts (500, then 204) and two with one; company 12: one.
        await s.complete(validWorkItem({ customerReference: "A" }));
        const dispatcher = s.dispatcher();
        await dispatcher.deliverDue();
        await s.complete(validWorkItem({ customerReference: "B" }));
        await s.complete(validWorkItem({ customerReference: "C" }));
        await s.complete(validWorkItem({ customerReference: "D" }), undefined, other);
        await new Promise((resolve) => setTimeout(resolve, 100));
        await dispatcher.deliverDue();
        const pending = await s.complete(validWorkItem({ customerReference: "still pending" }));
        const counts = async () => {
          const [row] = await s.t.query<{ deliveries: number | string; attempts: number | string }>(
            "SELECT (SELECT COUNT(*) FROM webhook_outbox) AS deliveries, (SELECT COUNT(*) FROM webhook_delivery_attempts) AS attempts",
          );
          return { deliveries: Number(row!.deliveries), attempts: Number(row!.attempts) };
        };
        assert.deepEqual(await counts(), { deliveries: 5, attempts: 5 });

        assert.equal(await sweepEndedDeliveries(s.t.store, { now: new Date(Date.now() + 29 * DAY), maxRows: 100 }), 0, "nothing is 30 days past its end yet");
        const later = new Date(Date.now() + DELIVERY_RETENTION_SECONDS * 1000 + 60_000);
        const pass = () => sweepEndedDeliveries(s.t.store, { now: later, maxRows: 3, chunkRows: 2 });
        assert.equal(await pass(), 3, "the first pass stops at its bound");
        assert.equal(await pass(), 1);
        assert.equal(await pass(), 0, "nothing left to sweep");
        assert.deepEqual(await counts(), { deliveries: 1, attempts: 0 }, "the attempts went with their deliveries");

        const left = (await s.t.app.inject({ url: "/api/Webhooks/Deliveries", headers: bearer(s.tenant.token) })).json<{ deliveries: Array<{ workItemId: number; status: string }> }>();
        assert.deepEqual(left.deliveries.map((d) => [d.workItemId, d.status]), [[pending.workItemId, "pending"]]);
        const theirs = (await s.t.app.inject({ url: "/api/Webhooks/Deliveries", headers: bearer(other.token) })).json<{ deliveries: unknown[] }>();
        assert.deepEqual(theirs.deliveries, []);
      }));

    test("a redelivered delivery has no end until it ends again", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        await s.complete();
        await s.dispatcher().deliverDue();
        const [delivery] = (await s.t.app.inject({ url: "/api/Webhooks/Deliveries", headers: bearer(s.tenant.token) })).json<{ deliveries: Array<{ deliveryId: number }> }>().deliveries;
        await s.t.app.inject({ method: "POST", url: `/api/Webhooks/Deliveries/${delivery!.deliveryId}/Redeliver`, headers: bearer(s.tenant.token) });
        const later = new Date(Date.now() + DELIVERY_RETENTION_SECONDS * 1000 + 60_000);
        assert.equal(await sweepEndedDeliveries(s.t.store, { now: later, maxRows: 100 }), 0);
        await s.dispatcher().deliverDue();
        assert.equal(await sweepEndedDeliveries(s.t.store, { now: later, maxRows: 100 }), 1);
      }));
  });
}
