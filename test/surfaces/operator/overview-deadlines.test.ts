/**
 * The Overview's queue by deadline and the bot's last hour (SPEC §14) through the operator API on
 * each store: New items past their deadline, the next five deadlines with their items and
 * companies, and the items the bot filed in the last hour; items no longer New never count.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Overview } from "../../../src/operators/overview.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { runOneBotPass } from "../../helpers/bot-harness.ts";
import { seedDeadlineQueue, type QueueShape } from "../../helpers/deadline-queue.ts";
import { createTestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

const SHAPE: QueueShape = {
  filedLastHour: 3,
  overdue: 4,
  deadlines: [
    { inHours: 1, items: 6, companies: 3 },
    { inHours: 3, items: 2, companies: 2 },
    { inHours: 25, items: 5, companies: 1 },
    { inHours: 49, items: 1, companies: 1 },
    { inHours: 73, items: 3, companies: 3 },
    { inHours: 97, items: 9, companies: 2 },
  ],
};

for (const backend of await availableBackends()) {
  describe(`operator overview: deadlines [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("overdue, the next five deadlines with their New items and companies, and the items filed in the last hour", async () => {
      const t = await createTestApp(backend);
      try {
        const ops = await createTestOperator(t.store, "viewer");
        const overview = async () => {
          const response = await t.app.inject({ url: "/api/Operator/Overview", headers: bearer(ops.token) });
          assert.equal(response.statusCode, 200, response.body);
          return response.json<Overview>();
        };
        assert.deepEqual((await overview()).deadlines, { overdue: 0, next: [] });
        assert.equal((await overview()).bot.submittedLastHour, 0);

        const [overdueAt, ...coming] = await seedDeadlineQueue(t, SHAPE);
        assert.ok(overdueAt && Date.parse(overdueAt) < Date.now());
        const first = await overview();
        assert.deepEqual(first.deadlines, {
          overdue: 4,
          next: SHAPE.deadlines.slice(0, 5).map((d, i) => ({ deadlineAt: coming[i], unsubmitted: d.items, companies: d.companies })),
        });
        assert.equal(first.bot.submittedLastHour, 3, "the filed items, which are no longer New");
        const waiting = first.companies.reduce((sum, company) => sum + company.counts.new, 0);
        assert.equal(waiting, 4 + SHAPE.deadlines.reduce((sum, d) => sum + d.items, 0), "every waiting item has a deadline here");

        // The bot files every waiting item: nothing waits any more, and the last hour counts them all.
        const counts = await runOneBotPass(t);
        assert.equal(counts.submitted, waiting);
        const after = await overview();
        assert.deepEqual(after.deadlines, { overdue: 0, next: [] });
        assert.equal(after.bot.submittedLastHour, 3 + waiting);
      } finally {
        await t.close();
      }
    });
  });
}
