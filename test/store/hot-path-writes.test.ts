/**
 * No write to a reference table on the hot path (SPEC §23). On Citus a reference table is copied
 * to every node, and a write to it is a two-phase commit on all of them: with one worker node
 * down it fails, and with it whatever made it, for every company. So the hot path (intake, a
 * bot pass with its authority calls and its decisions, a webhook delivery) is run on PostgreSQL
 * with every statement the store sends recorded, and none may INSERT into, UPDATE or DELETE FROM
 * a table that src/store/postgres/distribution.ts makes a reference table.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { TABLE_PLACEMENTS } from "../../src/store/postgres/distribution.ts";
import { createDispatcher } from "../../src/webhooks/dispatcher.ts";
import { availableBackends } from "../helpers/backends.ts";
import { withBot } from "../helpers/bot-harness.ts";
import { recordStoreStatements } from "../helpers/statement-recorder.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

const REFERENCE_TABLES = TABLE_PLACEMENTS.filter((placement) => placement.role === "reference").map((placement) => placement.table);

/** The reference tables `statement` writes to. */
export function referenceWrites(statement: string): string[] {
  return REFERENCE_TABLES.filter((table) => new RegExp(`\\b(?:INSERT\\s+INTO|DELETE\\s+FROM|UPDATE)\\s+(?:ONLY\\s+)?${table}\\b`, "i").test(statement));
}

test("the check finds a write to a reference table, and passes reads and other tables", () => {
  assert.ok(REFERENCE_TABLES.includes("audit_log") && !REFERENCE_TABLES.includes("authority_slots"), "the authority's slots are the coordinator's");
  assert.deepEqual(referenceWrites("INSERT INTO audit_log (action) VALUES ($1)"), ["audit_log"]);
  assert.deepEqual(referenceWrites("update bot_pauses set paused = true where work_type = $1"), ["bot_pauses"]);
  assert.deepEqual(referenceWrites("DELETE FROM operator_sessions WHERE expires_at < $1"), ["operator_sessions"]);
  assert.deepEqual(referenceWrites("SELECT 1 FROM bot_pauses WHERE work_type = $1 FOR UPDATE"), []);
  assert.deepEqual(referenceWrites("UPDATE work_items SET status = 'New' WHERE company_id = $1 AND NOT EXISTS (SELECT 1 FROM bot_pauses)"), []);
  assert.deepEqual(referenceWrites("INSERT INTO authority_slots (authority, slot) VALUES ($1, $2) ON CONFLICT (authority, slot) DO UPDATE SET holder = $3"), []);
});

const postgres = (await availableBackends()).find((backend) => backend.name === "postgres");

test("intake, a bot pass and a webhook delivery write no reference table", { skip: postgres ? false : "PostgreSQL is not reachable", timeout: HANG_TIMEOUT_MS }, async () => {
  const recorded = recordStoreStatements();
  const receiver = await startReceiver(() => 204);
  try {
    await withBot(postgres!, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true" }, async ({ t, add, item, run }) => {
      // What starting a process writes (its signing key, say) is not the hot path.
      recorded.clear();
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(await add(validWorkItem({ customerReference: `HOT-${i}`, webhookUrl: receiver.url })));
      await add(validWorkItem({ customerReference: "HOT-REJECTED", senderChamberOfCommerceNo: { sendValue: "1234567" }, webhookUrl: receiver.url }));
      await run();
      for (const key of keys) assert.equal((await item(key.workItemId)).status, "Successful");
      const dispatcher = createDispatcher({ store: t.store, config: t.config, owner: "hot-path" });
      await waitUntil("every decision delivered", async () => {
        await dispatcher.deliverDue();
        return receiver.requests.length >= 4;
      });
      const writes = [...recorded].flatMap((statement) => referenceWrites(statement).map((table) => `${table}: ${statement.replace(/\s+/g, " ").slice(0, 160)}`));
      assert.ok(recorded.size > 10, `recorded ${recorded.size} statements`);
      assert.deepEqual(writes, []);
    });
  } finally {
    await receiver.close();
  }
});
