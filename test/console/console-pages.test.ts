/**
 * The console's pages on both stores: keyset paging of the item list, webhook deliveries with
 * their attempts and Redeliver, pause and resume with their audit entries, and bad input as
 * readable 4xx pages, never a 500.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { runOneBotPass } from "../helpers/bot-harness.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { addItems } from "../helpers/store-items.ts";
import { createTestApp } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const rowCount = (body: string) => (body.split("<tbody>")[1]?.split("</tbody>")[0]?.match(/<tr>/g) ?? []).length;

for (const backend of await availableBackends()) {
  describe(`console pages [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("items page by page, deliveries and redeliver, pause and resume, the audit log; bad input is a 4xx page", async () => {
      const t = await createTestApp(backend);
      try {
        await t.store.createCompany({ companyId: 4, name: "Hooked <Ltd>" });
        await addItems(t.store, 4, 51, "https://hooks.example/work-items");
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);

        const first = await client.get("/console/work-items?companyId=4");
        assert.equal(rowCount(first.body), 50);
        const older = /href="(\/console\/work-items\?[^"]*cursor=[\w-]+[^"]*)"/.exec(first.body)?.[1];
        assert.ok(older, "a link to the older items");
        const second = await client.get(older.replace(/&amp;/g, "&"));
        assert.equal(rowCount(second.body), 1);
        assert.ok(!second.body.includes("cursor="), "the last page links no further");

        const overview = await client.get("/console");
        assert.match(overview.body, /Hooked &lt;Ltd&gt;/);
        const live = await client.get("/console/overview/live");
        assert.match(live.body, /^<div id="overview-live"/);

        await runOneBotPass(t);
        const deliveries = await client.get("/console/webhook-deliveries");
        assert.equal(deliveries.statusCode, 200);
        assert.equal(rowCount(deliveries.body), 50);
        assert.match(deliveries.body, /workitem\.succeeded/);
        const deliveryId = /webhook-deliveries\/(\d+)\/redeliver/.exec(deliveries.body)?.[1];
        assert.ok(deliveryId);
        assert.equal((await client.post(`/console/webhook-deliveries/${deliveryId}/redeliver`, { reason: "the receiver was fixed" })).statusCode, 303);
        assert.equal((await client.post("/console/webhook-deliveries/999999/redeliver", { reason: "no such" })).statusCode, 404);

        await client.get("/console");
        assert.equal((await client.post("/console/bot/pause", { workType: "AuthorityRvdm", reason: "authority maintenance" })).statusCode, 303);
        const paused = await client.get("/console");
        assert.match(paused.body, /Resume AuthorityRvdm/);
        assert.deepEqual(await t.store.pausedWorkTypes(), ["AuthorityRvdm"]);
        assert.equal((await client.post("/console/bot/resume", { workType: "AuthorityRvdm", reason: "maintenance over" })).statusCode, 303);
        assert.deepEqual(await t.store.pausedWorkTypes(), []);
        assert.equal((await client.post("/console/bot/pause", { workType: "<bad>", reason: "x" })).statusCode, 400);

        const audit = await client.get("/console/audit");
        const actions = [...audit.body.matchAll(/<td data-label="Action">(workitem\.\w+|bot\.\w+|delivery\.\w+|webhook\.\w+)<\/td>/g)].map((match) => match[1]);
        assert.deepEqual(actions, ["bot.resume", "bot.pause", "delivery.redeliver"], "newest first");
        assert.match(audit.body, /the receiver was fixed/);

        for (const [url, status] of [
          ["/console/work-items?status=Lost", 400],
          ["/console/work-items?companyId=abc", 400],
          ["/console/work-items?deadlineBefore=tomorrow", 400],
          // Repeated parameters are a 400 page since SPEC §24 (they kept their first value before).
          ["/console/work-items?status=Failed&status=New&customerReference=a&customerReference=b", 400],
          ["/console/webhook-deliveries?status=nope", 400],
          ["/console/audit?cursor=x", 400],
          ["/console/work-items/99999999999999999999", 404],
          ["/console/assets/..%2F..%2Fpackage.json", 404],
          ["/console/no-such-page", 404],
        ] as const) {
          const answer = await client.get(url);
          assert.equal(answer.statusCode, status, url);
          assert.match(String(answer.headers["content-type"]), /^text\/html/, url);
        }
      } finally {
        await t.close();
      }
    });
  });
}
