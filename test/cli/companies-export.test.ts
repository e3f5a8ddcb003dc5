/**
 * `companies export` (SPEC §22) through the real CLI on both stores: every item of the company,
 * and only its, as JSON Lines in id order across pages, each line exactly the operator API's view
 * of the item with its timeline; `--since` keeps the items added since; bad input is a one-line
 * error.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { EXPORT_PAGE_ITEMS } from "../../src/admin/company-export.ts";
import { availableBackends } from "../helpers/backends.ts";
import { createTestOperator } from "../helpers/operators.ts";
import { runCli, stopAll } from "../helpers/processes.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { withWebhooks } from "../helpers/webhook-harness.ts";

after(() => stopAll());

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { workItemId: number; companyId: number; timeline: Array<{ kind: string }> });

for (const backend of await availableBackends()) {
  describe(`companies export [${backend.name}]`, { timeout: 240_000 }, () => {
    test("every item of the company in id order, each as the operator API shows it with its timeline; --since", () =>
      withWebhooks(backend, {}, (i) => (i === 0 ? 500 : 204), async (s) => {
        const other = await s.t.tenant(12);
        const admin = await createTestOperator(s.t.store, "admin");
        // Items with history, a failed and a good delivery attempt, a change; another company's; and more than a page of New ones.
        const filed = await s.complete(validWorkItem({ customerReference: "FILED" }));
        const dispatcher = s.dispatcher();
        await dispatcher.deliverDue();
        await new Promise((resolve) => setTimeout(resolve, 100));
        await dispatcher.deliverDue();
        const change = await s.t.app.inject({
          method: "POST",
          url: "/api/AuthorityRvdm/AddWorkItemChange",
          headers: bearer(s.tenant.token),
          payload: { originalWorkItemId: filed.workItemId, customerReference: "CHANGE", changes: { plannedLoad: 4 } },
        });
        assert.equal(change.statusCode, 200, change.body);
        await s.complete(validWorkItem({ customerReference: "THEIRS" }), undefined, other);
        const many = EXPORT_PAGE_ITEMS + 20;
        const bulk = await s.t.store.addWorkItems({
          companyId: 11,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          batchMaxItems: 1000,
          items: Array.from({ length: many }, (_, i) => ({ customerReference: `BULK-${i}`, documentReference: null, webhookUrl: null, request: validWorkItem() })),
        });
        assert.equal(bulk.kind, "created");
        await new Promise((resolve) => setTimeout(resolve, 20));
        const since = new Date().toISOString();
        await new Promise((resolve) => setTimeout(resolve, 20));
        const late = (await s.t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(s.tenant.token), payload: validWorkItem({ customerReference: "LATE" }) })).json<{ workItemId: number }>();

        const result = await runCli(["companies", "export", "--company-id", "11"], { DATABASE_URL: s.t.databaseUrl });
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stderr, new RegExp(`Exported ${(many + 3).toLocaleString("en")} items of company 11\\.`), "the create, its change, the bulk and the late one");
        const exported = lines(result.stdout);
        const ids = exported.map((line) => line.workItemId);
        assert.deepEqual(ids, [...ids].sort((a, b) => a - b), "in id order");
        const listed: number[] = [];
        for (let cursor: string | null = ""; cursor !== null; ) {
          const page: { items: Array<{ workItemId: number }>; nextCursor: string | null } = (await s.t.app.inject({ url: `/api/Operator/WorkItems?companyId=11&limit=500${cursor ? `&cursor=${cursor}` : ""}`, headers: bearer(admin.token) })).json<{ items: Array<{ workItemId: number }>; nextCursor: string | null }>();
          listed.push(...page.items.map((item) => item.workItemId));
          cursor = page.nextCursor;
        }
        assert.deepEqual(ids, listed.sort((a, b) => a - b), "every item of company 11, and only its");
        for (const line of exported) {
          const view = await s.t.app.inject({ url: `/api/Operator/WorkItems/${line.workItemId}`, headers: bearer(admin.token) });
          assert.deepEqual(line, view.json(), `item ${line.workItemId} as the operator API shows it`);
        }
        const timeline = exported.find((line) => line.workItemId === filed.workItemId)!.timeline.map((entry) => entry.kind);
        assert.ok(timeline.includes("attempt") && timeline.includes("change") && timeline.filter((kind) => kind === "webhook").length === 2, timeline.join(" "));

        const recent = await runCli(["companies", "export", "--company-id", "11", "--since", since], { DATABASE_URL: s.t.databaseUrl });
        assert.equal(recent.code, 0, recent.stderr);
        assert.deepEqual(lines(recent.stdout).map((line) => line.workItemId), [late.workItemId], "only the items added since");
      }));
  });
}

test("companies export refuses a bad --since, a missing --company-id and an unknown company with one line", async () => {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "wia-export-usage-"));
  try {
    const env = { DATABASE_URL: `sqlite:${join(dir, "store.db")}` };
    for (const [args, code] of [
      [["companies", "export", "--company-id", "7", "--since", "yesterday"], 2],
      [["companies", "export", "--company-id", "7", "--since", "2026-02-30"], 2],
      [["companies", "export"], 2],
      [["companies", "export", "--company-id", "7"], 1],
    ] as const) {
      const result = await runCli([...args], env);
      assert.equal(result.code, code, `${args.join(" ")}: ${result.stderr}`);
      assert.equal(result.stdout, "", "nothing on stdout");
      assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
