/**
 * Migration 0007 (webhook deliveries) on a database that already holds data, on each store:
 * outbox rows written before it get delivery ids in creation order and, when they had ended, an
 * end time; new rows continue the numbering; and a webhook secret stored in plain text is
 * encrypted by the start-up step and still reads the same.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import type { StoreLocation } from "../../src/config.ts";
import { readMigrations } from "../../src/store/migrations.ts";
import { openStore } from "../../src/store/open-store.ts";
import { createWebhookSecrets } from "../../src/webhooks/secrets.ts";
import { availableBackends, queryRows } from "../helpers/backends.ts";

const BEFORE = 7;
const at = (minute: number) => `2026-11-20T10:${String(minute).padStart(2, "0")}:00.000Z`;
const PLAIN = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;

/** Runs statements in order on a database of `location` ($1… parameters), outside the store. */
async function execute(location: StoreLocation, work: (run: (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>) => Promise<void>): Promise<void> {
  if (location.kind === "sqlite") {
    const db = new Database(location.path);
    try {
      await work(async (sql, params = []) => {
        // `$1, $2, …` are SQLite's named parameters "1", "2", …, as the store binds them.
        const statement = db.prepare(sql);
        const bound = params.length === 0 ? [] : [Object.fromEntries(params.map((value, index) => [index + 1, value]))];
        return statement.reader ? (statement.all(...bound) as Array<Record<string, unknown>>) : (statement.run(...bound), []);
      });
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: location.url });
  await client.connect();
  try {
    await work(async (sql, params = []) => (await client.query(sql, params)).rows);
  } finally {
    await client.end();
  }
}

for (const backend of await availableBackends()) {
  describe(`migration 0007 on existing data [${backend.name}]`, () => {
    test("old deliveries are numbered in creation order, ended ones get their end; a plain secret is encrypted at start", async () => {
      const created = await backend.create();
      try {
        if (created.location.kind === "sqlite") mkdirSync(dirname(created.location.path), { recursive: true });
        // The schema as it was before this migration, with data in it.
        const folder = new URL(`../../src/store/${backend.name}/migrations/`, import.meta.url);
        await execute(created.location, async (run) => {
          await run(
            backend.name === "sqlite"
              ? "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
              : "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)",
          );
          for (const migration of readMigrations(folder).filter((m) => m.version < BEFORE)) {
            if (backend.name === "sqlite") {
              const db = new Database(created.location.kind === "sqlite" ? created.location.path : "");
              db.exec(migration.sql);
              db.close();
            } else {
              await run(migration.sql);
            }
            await run("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [migration.version, migration.name, at(0)]);
          }
          await run("INSERT INTO companies (company_id, name, webhook_secret, created_at) VALUES (1, 'Old', $1, $2)", [PLAIN, at(0)]);
          const [batch] = await run("INSERT INTO work_batches (company_id, work_type, status, created_at) VALUES (1, 'AuthorityRvdm', 'Completed', $1) RETURNING work_batch_id", [at(0)]);
          const items: unknown[] = [];
          for (let i = 0; i < 3; i++) {
            const [item] = await run(
              `INSERT INTO work_items (company_id, work_batch_id, work_type, status, customer_reference, webhook_url, request, created_at, updated_at)
               VALUES (1, $1, 'AuthorityRvdm', 'Successful', $2, 'https://hooks.example/old', '{}', $3, $3) RETURNING work_item_id`,
              [batch!.work_batch_id, `OLD-${i}`, at(i + 1)],
            );
            items.push(item!.work_item_id);
          }
          const outbox = `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, attempts, next_attempt_at, created_at, delivered_at)
                          VALUES (1, $1, $2, 'workitem.succeeded', 'https://hooks.example/old', $3, $4, $5, $6, $7)`;
          // Written newest first, so the numbering follows created_at, not the physical order.
          await run(outbox, ["msg_c", items[2], "Pending", 1, at(40), at(30), null]);
          await run(outbox, ["msg_b", items[1], "Failed", 9, at(25), at(20), null]);
          await run(outbox, ["msg_a", items[0], "Delivered", 1, at(11), at(10), at(11)]);
        });

        const store = await openStore(created.location);
        try {
          const deliveries = await store.listWebhookDeliveries(1, { limit: 10 });
          assert.deepEqual(
            deliveries.map((d) => [d.deliveryId, d.eventId, d.status, d.attempts.length, d.nextAttemptAt]),
            [
              [3, "msg_c", "pending", 0, at(40)],
              [2, "msg_b", "failed", 0, null],
              [1, "msg_a", "delivered", 0, null],
            ],
          );
          const ended = await queryRows<{ event_id: string; ended_at: string | Date | null }>(created.location, "SELECT event_id, ended_at FROM webhook_outbox ORDER BY delivery_id");
          assert.deepEqual(
            ended.map((row) => [row.event_id, row.ended_at === null ? null : new Date(row.ended_at).toISOString()]),
            [["msg_a", at(11)], ["msg_b", at(25)], ["msg_c", null]],
          );
          await execute(created.location, async (run) => {
            await run(
              `INSERT INTO webhook_outbox (company_id, event_id, work_item_id, event_type, url, status, next_attempt_at, created_at)
               SELECT company_id, 'msg_d', work_item_id, 'workitem.failed', url, 'Pending', $1, $1 FROM webhook_outbox WHERE event_id = 'msg_a'`,
              [at(50)],
            );
          });
          assert.equal((await store.listWebhookDeliveries(1, { limit: 1 }))[0]?.deliveryId, 4, "new deliveries continue the numbering");

          const secrets = createWebhookSecrets(store, { dataEncryptionKey: undefined, webhookSecretOverlapSeconds: 86_400 });
          assert.equal(await secrets.encryptStored(), 1);
          const [row] = await queryRows<{ webhook_secret: string }>(created.location, "SELECT webhook_secret FROM companies WHERE company_id = 1");
          assert.match(row!.webhook_secret, /^enc1\./);
          assert.equal(await secrets.current(1), PLAIN);
        } finally {
          await store.close();
        }
      } finally {
        await created.cleanup();
      }
    });
  });
}
