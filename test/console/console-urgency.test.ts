/**
 * What needs a look first (issues 41 and 48), on both stores: New items are listed by deadline, the
 * overdue first, with "Due today" in CONSOLE_TZ and not overdue, "Overdue" its own filter; the sort is one click away and pages by
 * deadline; companies go by name; bad sort or due values are a 400 page; Retry is offered only
 * where it can end otherwise.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { deadlineMark } from "../../src/domain/due.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { availableBackends } from "../helpers/backends.ts";
import { createDispatcher } from "../../src/webhooks/dispatcher.ts";
import { runOneBotPass } from "../helpers/bot-harness.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { signedInClient } from "../helpers/console-session.ts";
import { addItems } from "../helpers/store-items.ts";
import { createTestApp, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const HOUR = 60 * 60 * 1000;
const referencesInOrder = (body: string) => [...body.matchAll(/<td class="reference"><a href="\/console\/work-items\/(\d+)">/g)].map((match) => Number(match[1]));

for (const backend of await availableBackends()) {
  describe(`console urgency [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("New items by deadline, overdue first, Due today marked; newest first one click away; paged by deadline", async () => {
      // UTC: the rest of "today" is known to the test whatever the hour it runs at.
      const t = await createTestApp(backend, { CONSOLE_TZ: "UTC" });
      try {
        const now = Date.now();
        const endOfToday = new Date(new Date(now).toISOString().slice(0, 10) + "T23:59:59.000Z").getTime();
        const dueToday = endOfToday - now > 3 * HOUR ? new Date(now + 2.5 * HOUR).toISOString() : undefined;
        const deadlines = [new Date(now + 72 * HOUR).toISOString(), new Date(now - 5 * HOUR).toISOString(), new Date(now + HOUR).toISOString(), ...(dueToday ? [dueToday] : [])];
        await t.store.createCompany({ companyId: 5, name: "Early Farms" });
        await t.store.createCompany({ companyId: 6, name: "Late Farms" });
        const keys = await addItems(t.store, 5, deadlines.length, null, deadlines);
        const [later, overdue, atRisk, today] = keys.map((key) => key.workItemId);
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);

        const waiting = await client.get("/console/work-items?status=New");
        assert.equal(waiting.statusCode, 200);
        assert.deepEqual(referencesInOrder(waiting.body), [overdue, atRisk, ...(today ? [today] : []), later], "the earliest deadline first");
        assert.match(waiting.body, /<option value="deadline" selected>Deadline: unfinished first, earliest first<\/option>/);
        assert.match(waiting.body, /mark-overdue">Overdue</);
        if (today) assert.match(waiting.body, /mark-due-today">Due today</);

        const newest = await client.get("/console/work-items?status=New&sort=newest");
        assert.deepEqual(referencesInOrder(newest.body), [...keys].reverse().map((key) => key.workItemId));

        const dueNow = await client.get("/console/work-items?due=today");
        const dueBy = (deadline: string) => ["atRisk", "dueToday"].includes(deadlineMark({ status: "New", deadlineAt: deadline }, new Date(now), { timeZone: "UTC", holidays: "NL" }) ?? "");
        const dueIds = keys.filter((_, index) => dueBy(deadlines[index]!)).map((key) => key.workItemId);
        assert.deepEqual(referencesInOrder(dueNow.body), [atRisk, ...(today ? [today] : []), ...(dueIds.includes(later!) ? [later] : [])], "due today: not the overdue ones, by deadline");
        const overdueOnly = await client.get("/console/work-items?due=overdue");
        assert.deepEqual(referencesInOrder(overdueOnly.body), [overdue], "Overdue is its own filter");

        await addItems(t.store, 6, 55, null, Array.from({ length: 55 }, (_, index) => new Date(now + (10 + index) * HOUR).toISOString()));
        const first = await client.get("/console/work-items?status=New");
        const next = /href="(\/console\/work-items\?[^"]*cursor=[^"]+)"/.exec(first.body)?.[1];
        assert.ok(next, "a link to the later deadlines");
        const second = await client.get(next.replace(/&amp;/g, "&"));
        assert.equal(second.statusCode, 200);
        const all = [...referencesInOrder(first.body), ...referencesInOrder(second.body)];
        // Three or four of company 5's (Due today only before 21:00 UTC), and company 6's 55.
        assert.equal(all.length, keys.length + 55);
        assert.equal(new Set(all).size, keys.length + 55, "no item twice across the pages");

        const rows = await client.get("/console/work-items?companyId=5&sort=newest");
        assert.match(rows.body, /Early Farms <span class="muted">#5<\/span>/, "the company by its name");

        for (const bad of ["sort=oldest", "due=tomorrow", "status=New&cursor=soon~1", "status=New&cursor=2030-01-01T00:00:00Z~x", "status=Failed&due=today"]) {
          assert.equal((await client.get(`/console/work-items?${bad}`)).statusCode, 400, bad);
        }
      } finally {
        await t.close();
      }
    });

    test("a rejected item is not offered Retry, which would fail again; one the Authority never answered is", async () => {
      const t = await createTestApp(backend);
      try {
        const tenant = await t.tenant(8);
        const add = (body: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { authorization: `Bearer ${tenant.token}` }, payload: validWorkItem(body) });
        const rejected = (await add({ customerReference: "KVK-7", senderChamberOfCommerceNo: { sendValue: "1234567" } })).json<{ workItemId: number }>();
        await runOneBotPass(t);
        assert.equal((await t.store.getWorkItemTimeline(rejected.workItemId))?.item.error?.code, "AUTHORITY_REJECTED");
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);
        const page = await client.get(`/console/work-items/${rejected.workItemId}`);
        assert.doesNotMatch(page.body, /<button type="submit">Retry<\/button>/);
        assert.match(page.body, /Retry is not offered: the same item would fail again/);
        assert.match(page.body, /<dt>Transport date<\/dt><dd><time/, "the transport date, in CONSOLE_TZ");
      } finally {
        await t.close();
      }
    });

    test("deliveries: a failing pending one is Retrying and counted on the Overview; a delivered one shows no last error", async () => {
      const receiver = await startReceiver((index) => (index === 0 ? 503 : 204));
      const t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" });
      try {
        const tenant = await t.tenant(9);
        await t.store.renameCompany(9, "Hooked Farms");
        for (const reference of ["HOOK-A", "HOOK-B"]) {
          const added = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { authorization: `Bearer ${tenant.token}` }, payload: validWorkItem({ customerReference: reference, webhookUrl: receiver.url }) });
          assert.equal(added.statusCode, 200, added.body);
        }
        await runOneBotPass(t);
        // Two deliveries, one attempt each: the first answered 503, the second 204.
        await createDispatcher({ store: t.store, config: t.config, owner: "test" }).deliverDue();
        await receiver.waitForRequests(2, 30_000);
        const admin = await createOperatorAccount(t.store, { email: "admin@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);
        const page = (await client.get("/console/webhook-deliveries?companyId=9")).body;
        const rows = page.split("<tbody>")[1]!.split("</tr>").filter((row) => row.includes("<td"));
        assert.equal(rows.length, 2);
        const retrying = rows.find((row) => row.includes("Retrying"));
        const delivered = rows.find((row) => row.includes("badge-delivered"));
        assert.ok(retrying && delivered, page);
        assert.match(retrying, /HTTP 503/);
        assert.doesNotMatch(delivered, /last-error|HTTP 204<\/span>/, "a delivered row has no last error");
        assert.match(delivered, /Hooked Farms <span class="muted">#9<\/span>/);
        const overview = (await client.get("/console")).body;
        assert.match(overview, /webhook-deliveries\?companyId=9&amp;status=pending"><strong class="alert-count">1<\/strong><\/a> \/ 1/, "retrying of pending, linked");
      } finally {
        await t.close();
        await receiver.close();
      }
    });
  });
}
