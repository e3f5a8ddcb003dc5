/**
 * Issue 48 (SPEC §25), on each store: the operator API lists what the console lists. On the busy
 * morning (test/helpers/busy-morning.ts), for each filter the console has (a company by name or
 * number, status, Overdue, Due today) in both orders, a script paging the API to the end with a
 * small page gets the console's items in the console's order, and the same total; each item
 * carries its company's name and its deadline mark; a company's overdue items come by deadline,
 * one documented call per page. Then what a script can get wrong: a cursor of the other order,
 * `due` with another status, a name that stands for too many companies, both company filters, a
 * batch without its company; and a total above the cap is an estimate.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../../src/domain/views.ts";
import { createOperatorAccount } from "../../../src/operators/accounts.ts";
import { TOTAL_CAP, type ListedWorkItem } from "../../../src/operators/work-item-list.ts";
import { availableBackends } from "../../helpers/backends.ts";
import { BUSY_COMPANIES, OVERDUE_ITEMS, WAITING_ITEMS, withBusyMorning } from "../../helpers/busy-morning.ts";
import { signedInClient, type ConsoleClient } from "../../helpers/console-session.ts";
import { createTestOperator } from "../../helpers/operators.ts";
import { bearer, createTestApp, problem, validWorkItem, type TestApp } from "../../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../../helpers/waiting.ts";

type Page = { items: ListedWorkItem[]; nextCursor: string | null; total: number | null; totalEstimate: number | null };

/** Every page of the API from the first, `limit` at a time: the items, and the first page's total. */
async function apiToTheEnd(t: TestApp, token: string, query: string, limit = 7): Promise<{ items: ListedWorkItem[]; total: number | null; calls: number }> {
  const items: ListedWorkItem[] = [];
  let cursor: string | null = null;
  let total: number | null = null;
  for (let calls = 1; calls < 200; calls++) {
    const url: string = `/api/Operator/WorkItems?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const response: LightMyRequestResponse = await t.app.inject({ url, headers: bearer(token) });
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    const page = response.json<Page>();
    if (calls === 1) total = page.total;
    items.push(...page.items);
    if (page.nextCursor === null) return { items, total, calls };
    cursor = page.nextCursor;
  }
  throw new Error(`${query}: the pages never ended`);
}

/** Every page of the console's list from the first, following its link to the next: the item ids and the total it shows. */
async function consoleToTheEnd(client: ConsoleClient, query: string): Promise<{ ids: number[]; total: string }> {
  const ids: number[] = [];
  let url: string | undefined = `/console/work-items?${query}`;
  let total = "";
  for (let pages = 0; url && pages < 50; pages++) {
    const response: LightMyRequestResponse = await client.get(url);
    assert.equal(response.statusCode, 200, `${url}: ${response.body.slice(0, 400)}`);
    if (pages === 0) total = /<p class="total" id="items-total">([^<]*)<\/p>/.exec(response.body)?.[1] ?? "";
    ids.push(...[...response.body.matchAll(/<td class="reference"><a href="\/console\/work-items\/(\d+)">/g)].map((match) => Number(match[1])));
    url = /<nav class="pager" aria-label="Pages"><a href="([^"]+)">/.exec(response.body)?.[1]?.replace(/&amp;/g, "&");
  }
  return { ids, total };
}

const totalOf = (text: string) => (text === "No work items match." ? 0 : Number(/^([\d,]+) items?$/.exec(text)?.[1]?.replace(/,/g, "") ?? NaN));

/** The same filters, as the console's form and as the API's parameters. */
const CASES: Array<{ name: string; console: string; api: string }> = [
  { name: "everything by deadline", console: "sort=deadline", api: "order=deadline" },
  { name: "everything, newest first", console: "sort=newest", api: "order=newest" },
  { name: "Overdue", console: "due=overdue", api: "due=overdue&order=deadline" },
  { name: "Due today", console: "due=today", api: "due=today&order=deadline" },
  { name: "a name two companies start, overdue", console: "company=acme&due=overdue", api: "company=acme&due=overdue&order=deadline" },
  { name: "a name, newest first", console: "company=Boer&sort=newest", api: "company=Boer" },
  { name: "New by deadline", console: "status=New", api: "status=New&order=deadline" },
  { name: "a number and a status", console: "company=%2344&status=Successful", api: "company=44&status=Successful" },
  { name: "a company by number, by deadline", console: "companyId=42&sort=deadline", api: "companyId=42&order=deadline" },
  { name: "a kind, by deadline", console: "kind=create&sort=deadline", api: "kind=create&order=deadline" },
];

for (const backend of await availableBackends()) {
  describe(`the operator API lists what the console lists [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("on the busy morning, in both orders, paged to the end, with each filter of the console", () =>
      withBusyMorning(backend, async ({ t }) => {
        const { token } = await createTestOperator(t.store, "viewer");
        const admin = await createOperatorAccount(t.store, { email: "parity@example.com", role: "admin" });
        const client = await signedInClient(t.app, admin.email, admin.password);
        for (const { name, console: consoleQuery, api: apiQuery } of CASES) {
          const [fromApi, fromConsole] = await Promise.all([apiToTheEnd(t, token, apiQuery), consoleToTheEnd(client, consoleQuery)]);
          assert.ok(fromApi.items.length > 0, `${name}: lists something`);
          assert.deepEqual(fromApi.items.map((item) => item.workItemId), fromConsole.ids, `${name}: the same items in the same order`);
          assert.equal(fromApi.total, totalOf(fromConsole.total), `${name}: the same total`);
          assert.equal(fromApi.total, fromApi.items.length, `${name}: the total is what paging finds`);
        }

        const { items: all } = await apiToTheEnd(t, token, "order=deadline", 500);
        const names = new Map<number, string>(BUSY_COMPANIES.map((company) => [company.companyId, company.name]));
        assert.ok(all.every((item) => item.companyName === names.get(item.companyId)), "each item carries its company's name");
        assert.equal(all.filter((item) => item.overdue).length, OVERDUE_ITEMS);
        assert.ok(all.every((item) => item.overdue === (item.deadline === "overdue")), "overdue is the mark");
        assert.equal(all.filter((item) => item.status === "New").length, WAITING_ITEMS + 3);
        const finishedAt = all.findIndex((item) => item.status !== "New");
        assert.ok(all.slice(0, finishedAt).every((item) => item.status === "New") && all.slice(finishedAt).every((item) => item.status !== "New"), "unfinished items first");
        assert.deepEqual(all.slice(finishedAt - 3, finishedAt).map((item) => item.deadlineAt), [null, null, null], "the waiting items without a deadline end their part");
        assert.ok(all.some((item) => item.deadline === "dueToday" || item.deadline === "atRisk"));
      }));

    test("a script lists a company's overdue items by deadline, one call per page, as documented", () =>
      withBusyMorning(backend, async ({ t }) => {
        const { token } = await createTestOperator(t.store, "viewer");
        const { items, calls, total } = await apiToTheEnd(t, token, "company=Acme%20Transport&due=overdue&order=deadline", 2);
        assert.ok(items.length > 2 && calls === Math.ceil(items.length / 2), `${items.length} items in ${calls} calls`);
        assert.equal(total, items.length);
        assert.ok(items.every((item) => item.companyName === "Acme Transport" && item.overdue && item.status === "New"));
        const deadlines = items.map((item) => item.deadlineAt!);
        assert.deepEqual(deadlines, [...deadlines].sort(), "earliest deadline first");
      }));
  });

  describe(`what a script can get wrong on the list [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("400 problems naming the parameter: another order's cursor, due with another status, too many companies for a name, both company filters, a batch alone", async () => {
      const t = await createTestApp(backend);
      try {
        const { token } = await createTestOperator(t.store, "viewer");
        for (let i = 1; i <= 21; i++) await t.store.createCompany({ companyId: 700 + i, name: `Zeta Farms ${i}` });
        const tenant = await t.tenant(700);
        for (let i = 0; i < 3; i++) await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem() });
        const get = (query: string) => t.app.inject({ url: `/api/Operator/WorkItems?${query}`, headers: bearer(token) });
        const byDeadline = (await get("order=deadline&limit=1")).json<Page>();
        const newest = (await get("limit=1")).json<Page>();
        assert.ok(byDeadline.nextCursor && newest.nextCursor);
        for (const [query, field, message] of [
          [`cursor=${byDeadline.nextCursor}`, "cursor", /in the newest order/],
          [`order=deadline&cursor=${newest.nextCursor}`, "cursor", /in the deadline order/],
          ["due=today&status=Failed", "due", /only New items/],
          ["company=zeta", "company", /starts the names of 21 companies/],
          ["company=700&companyId=700", "company", /not both/],
          ["workBatchId=1", "workBatchId", /needs companyId or company/],
          ["company=%230", "company", /not a company number/],
          ["order=oldest", "order", /./],
          ["due=tomorrow", "due", /./],
          ["kind=amend", "kind", /./],
        ] as const) {
          const response = await get(query);
          assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
          assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
          assert.match(problem(response).errors?.[field]?.join(" ") ?? "", message, `${query}: ${response.body}`);
        }
        const oneZeta = (await get("company=Zeta%20Farms%2021")).json<Page>();
        assert.deepEqual([oneZeta.items, oneZeta.total], [[], 0], "a name that matches companies without items lists none");
        assert.equal((await get("company=nobody")).json<Page>().total, 0, "a name no company has lists none");
        assert.equal((await get(`company=%23${tenant.companyId}`)).json<Page>().total, 3, "#number");
      } finally {
        await t.close();
      }
    });

    test("above the cap the total is an estimate from a sample of the ids, the API says so, and the pages still end", async () => {
      const t = await createTestApp(backend);
      try {
        const { token } = await createTestOperator(t.store, "viewer");
        const items = TOTAL_CAP + 1500;
        for (const companyId of [1, 2]) {
          await t.store.createCompany({ companyId, name: `Bulk ${companyId}` });
          for (let start = 0; start < items / 2; start += 1000) {
            const batch = Array.from({ length: Math.min(1000, items / 2 - start) }, (_, i) => ({ customerReference: `B-${start + i}`, documentReference: null, webhookUrl: null, request: validWorkItem(), deadlineAt: "2030-01-01T11:00:00.000Z" }));
            assert.equal((await t.store.addWorkItems({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: 100_000, items: batch })).kind, "created");
          }
        }
        const page = (await t.app.inject({ url: "/api/Operator/WorkItems?status=New&order=deadline&limit=500", headers: bearer(token) })).json<Page>();
        assert.equal(page.total, null);
        assert.ok(page.totalEstimate !== null && page.totalEstimate > TOTAL_CAP && Math.abs(page.totalEstimate - items) / items < 0.05, `estimate ${page.totalEstimate} of ${items}`);
        const company = (await t.app.inject({ url: "/api/Operator/WorkItems?companyId=1&limit=1", headers: bearer(token) })).json<Page>();
        assert.deepEqual([company.total, company.totalEstimate], [items / 2, null], "under the cap: exact");
      } finally {
        await t.close();
      }
    });
  });
}
