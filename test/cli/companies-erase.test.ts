/**
 * A company that leaves (SPEC §22), through the real CLI on both stores: its keys are refused
 * within 5 s by a process that took them, nothing of it is left in any table, other companies are
 * untouched, one audit entry says so, and a key made later for the same id starts an empty
 * company. An erase SIGKILLed half-way resumes on the next run and ends in the same state.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import type { StoreLocation } from "../../src/config.ts";
import { availableBackends, openFreshStore, queryRows } from "../helpers/backends.ts";
import { runCli, startCli, stopAll } from "../helpers/processes.ts";
import { bearer, validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { withWebhooks } from "../helpers/webhook-harness.ts";

after(() => stopAll());

const erase = (companyId: number, ...more: string[]) => ["companies", "erase", "--company-id", String(companyId), "--confirm", String(companyId), ...more];

/** Every table with a company_id column, but the audit log's, which keeps ids for good. */
async function companyTables(location: StoreLocation): Promise<string[]> {
  const rows =
    location.kind === "sqlite"
      ? await queryRows<{ name: string }>(location, "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'company_id' ORDER BY m.name")
      : await queryRows<{ name: string }>(location, "SELECT table_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'company_id' ORDER BY table_name");
  return rows.map((row) => row.name).filter((name) => name !== "audit_log");
}

/** Every row of the company, table by table, as text: what an erase must leave alone (or take). */
async function rowsOf(location: StoreLocation, companyId: number): Promise<Record<string, string[]>> {
  const rows: Record<string, string[]> = {};
  for (const table of await companyTables(location)) {
    const found = await queryRows(location, `SELECT * FROM ${table} WHERE company_id = $1`, [companyId]);
    rows[table] = found.map((row) => JSON.stringify(row)).sort();
  }
  return rows;
}

const nonEmpty = (rows: Record<string, string[]>) => Object.fromEntries(Object.entries(rows).filter(([, list]) => list.length > 0));

const erasedEntries = (location: StoreLocation, companyId: number) =>
  queryRows<{ operator_id: string; reason: string; items: number | string }>(location, "SELECT operator_id, reason, items FROM audit_log WHERE action = 'company.erased' AND company_id = $1", [companyId]);

for (const backend of await availableBackends()) {
  describe(`companies erase [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("keys refused within 5 s, nothing of the company left, the others untouched, one audit entry; a new key starts an empty company", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const location: StoreLocation = s.t.databaseUrl.startsWith("sqlite:") ? { kind: "sqlite", path: s.t.databaseUrl.slice(7) } : { kind: "postgres", url: s.t.databaseUrl };
        const other = await s.t.tenant(12);
        const post = (token: string, path: string, payload: unknown, headers: Record<string, string> = {}) =>
          s.t.app.inject({ method: "POST", url: `/api/AuthorityRvdm/${path}`, headers: { ...bearer(token), ...headers }, payload: payload as Record<string, unknown> });
        for (const tenant of [s.tenant, other]) {
          // A filed item with its delivery and a change, an item under an idempotency key, and one New.
          const filed = await s.complete(validWorkItem({ customerReference: `FILED-${tenant.companyId}` }), undefined, tenant);
          assert.equal((await post(tenant.token, "AddWorkItemChange", { originalWorkItemId: filed.workItemId, customerReference: "CHANGE", changes: { plannedLoad: 2 } })).statusCode, 200);
          await s.complete(validWorkItem({ customerReference: `KEYED-${tenant.companyId}` }), undefined, tenant);
          assert.equal((await post(tenant.token, "AddWorkItemCreate", validWorkItem({ customerReference: "NEW" }), { "idempotency-key": "the-same-key" })).statusCode, 200);
        }
        await s.dispatcher().deliverDue();
        const before = nonEmpty(await rowsOf(location, 11));
        for (const table of ["work_items", "work_item_history", "events", "webhook_outbox", "webhook_delivery_attempts", "idempotency_keys", "api_keys", "companies", "work_batches"]) {
          assert.ok(before[table]?.length, `company 11 has rows in ${table} to erase`);
        }
        const theirs = await rowsOf(location, 12);
        const [{ largest }] = (await queryRows<{ largest: number | string }>(location, "SELECT MAX(work_item_id) AS largest FROM work_items WHERE company_id = 11")) as [{ largest: number | string }];

        const cli = startCli(erase(11, "--reason", "the contract ended", "--json"), { DATABASE_URL: s.t.databaseUrl });
        const revokedAt = await waitUntil("the CLI revoked the keys", async () => {
          const [row] = await queryRows<{ revoked_at: string | Date | null }>(location, "SELECT revoked_at FROM api_keys WHERE company_id = 11");
          return row?.revoked_at ? Date.parse(String(row.revoked_at instanceof Date ? row.revoked_at.toISOString() : row.revoked_at)) : undefined;
        });
        const read = () => s.t.app.inject({ url: "/api/AuthorityRvdm/WorkItems", headers: bearer(s.tenant.token) });
        await waitUntil("this process refuses the token", async () => (await read()).statusCode === 401, 10_000);
        assert.ok(Date.now() - revokedAt <= 5000, `refused ${Date.now() - revokedAt} ms after the keys were revoked`);
        assert.equal((await s.t.app.inject({ method: "POST", url: "/api/Login/Authenticate", payload: { apiKey: s.tenant.apiKey, secret: s.tenant.secret } })).statusCode, 401);

        assert.equal(await cli.exited, 0, cli.output());
        const result = JSON.parse(cli.stdout()) as { companyId: number; items: number; alreadyErased: boolean };
        assert.deepEqual([result.companyId, result.items, result.alreadyErased], [11, 4, false]);
        assert.match(cli.stderr(), /keys are revoked[\s\S]*deleting its 4 items/, "progress on stderr");

        assert.deepEqual(nonEmpty(await rowsOf(location, 11)), {}, "no row of company 11 in any table");
        assert.deepEqual(await rowsOf(location, 12), theirs, "company 12 untouched");
        assert.deepEqual(
          (await erasedEntries(location, 11)).map((e) => [e.operator_id, e.reason, Number(e.items)]),
          [["cli", "the contract ended", 4]],
        );
        const audit = await queryRows<Record<string, unknown>>(location, "SELECT * FROM audit_log");
        assert.ok(!JSON.stringify(audit).includes("FILED-11") && !JSON.stringify(audit).includes("KEYED-11"), "the audit entry holds no field of an item");

        // A key made later for company 11 starts an empty company.
        const again = await s.t.tenant(11);
        const get = async (url: string) => (await s.t.app.inject({ url, headers: bearer(again.token) })).json<Record<string, unknown[]>>();
        assert.deepEqual((await get("/api/AuthorityRvdm/WorkItems")).items, []);
        assert.deepEqual((await get("/api/Events")).events, []);
        assert.deepEqual((await get("/api/Webhooks/Deliveries")).deliveries, []);
        assert.equal((await s.t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${Number(largest)}`, headers: bearer(again.token) })).statusCode, 404);
        const fresh = await post(again.token, "AddWorkItemCreate", validWorkItem({ customerReference: "NEW" }), { "idempotency-key": "the-same-key" });
        assert.equal(fresh.statusCode, 200, fresh.body);
        assert.ok(fresh.json<{ workItemId: number }>().workItemId > Number(largest), "a new item, not the answer of the erased one's key, and a new id");

      }));

    test("an erase SIGKILLed half-way resumes on the next run and ends in the same state", async () => {
      const fresh = await openFreshStore(backend);
      try {
        const { store, location, databaseUrl } = fresh;
        const items = 6000;
        for (const companyId of [7, 8]) {
          await store.createCompany({ companyId, name: `c${companyId}` });
          await store.createApiKey({ companyId, keyId: `key-${companyId}`, name: null, secretHash: "x" });
          for (let done = 0; done < (companyId === 7 ? items : 100); done += 1000) {
            const batch = Array.from({ length: 1000 }, (_, i) => ({ customerReference: `R${done + i}`, documentReference: null, webhookUrl: null, request: validWorkItem() }));
            assert.equal((await store.addWorkItems({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: 1000, items: companyId === 7 ? batch : batch.slice(0, 100) })).kind, "created");
          }
        }
        const theirs = await rowsOf(location, 8);
        const count = async () => Number((await queryRows<{ n: number | string }>(location, "SELECT COUNT(*) AS n FROM work_items WHERE company_id = 7"))[0]!.n);

        const first = startCli(erase(7), { DATABASE_URL: databaseUrl });
        await waitUntil("the first run deletes items", async () => (await count()) < items, 60_000, 5);
        await first.kill();
        assert.equal(await first.exited, null, "killed");
        const [state] = await queryRows<{ phase: string }>(location, "SELECT phase FROM company_erasures WHERE company_id = 7");
        assert.equal(state?.phase, "deleting", "killed half-way: the erase is recorded as under way");
        const left = await count();
        assert.ok(left > 0 && left < items, `killed half-way: ${left} of ${items} items left`);
        assert.deepEqual(await erasedEntries(location, 7), [], "no audit entry yet");
        assert.ok((await queryRows(location, "SELECT 1 FROM api_keys WHERE company_id = 7 AND revoked_at IS NULL")).length === 0, "its keys stay revoked");

        const second = await runCli(erase(7, "--json"), { DATABASE_URL: databaseUrl });
        assert.equal(second.code, 0, second.stderr);
        assert.deepEqual(second.json(), { companyId: 7, items, erasedAt: second.json<{ erasedAt: string }>().erasedAt, alreadyErased: false });
        assert.deepEqual(nonEmpty(await rowsOf(location, 7)), {}, "nothing of company 7 left");
        assert.deepEqual(await rowsOf(location, 8), theirs, "company 8 untouched");
        assert.deepEqual((await erasedEntries(location, 7)).map((e) => Number(e.items)), [items], "one audit entry, with every item counted");

        const third = await runCli(erase(7, "--json"), { DATABASE_URL: databaseUrl });
        assert.equal(third.code, 0, third.stderr);
        assert.equal(third.json<{ alreadyErased: boolean }>().alreadyErased, true, "a run after the end says it was erased already");
        assert.equal((await erasedEntries(location, 7)).length, 1);
      } finally {
        await fresh.cleanup();
      }
    });
  });
}

test("companies erase refuses a missing or wrong --confirm and a bad --reason with a one-line usage error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wia-erase-usage-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const args of [
    ["companies", "erase", "--company-id", "7"],
    ["companies", "erase", "--company-id", "7", "--confirm", "8"],
    ["companies", "erase", "--company-id", "7", "--confirm", "7", "--reason", ""],
  ]) {
    const result = await runCli(args, { DATABASE_URL: `sqlite:${join(dir, "store.db")}` });
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr.split("\n")[0]!, /^--(confirm|reason) /);
  }
});
