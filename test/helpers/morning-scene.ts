/**
 * An operator's morning for the console's browser test and screenshots (SPEC §16): a real HTTP
 * server on a fresh SQLite store with nothing in it, a normal morning, or an overloaded one. A
 * morning has its queue by deadline (deadline-queue.ts), a day of filings, failures the authority
 * simulator rejected, and webhook deliveries to hosts that do not resolve, tried once by the real
 * dispatcher, one of them stopped by an operator.
 *
 * Everything goes through the service's own code, at the time it runs. To draw a day, the scene
 * then moves the history items' filing times back over the last 23 hours on its own connection
 * to the database file: the one write past the store, made for the picture and never asserted on.
 */
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { chromium } from "playwright-core";
import { registrationOf } from "../../src/domain/views.ts";
import { actionBy } from "../../src/operators/roles.ts";
import { createOperatorAccount } from "../../src/operators/accounts.ts";
import { createDispatcher } from "../../src/webhooks/dispatcher.ts";
import { sqliteBackend } from "./backends.ts";
import { runOneBotPass } from "./bot-harness.ts";
import { CHROMIUM_PATH, type BrowserScene } from "./console-scene.ts";
import { QUEUES, seedDeadlineQueue } from "./deadline-queue.ts";
import { bearer, createTestApp, validWorkItem, type TestApp } from "./test-app.ts";

export type Morning = "empty" | "normal" | "overloaded";

interface MorningShape {
  queue: (typeof QUEUES)[keyof typeof QUEUES];
  /** Items filed over the day before this hour (on top of the queue's last hour). */
  filedEarlier: number;
  /** Items the authority rejects. */
  rejected: number;
  /** Items whose webhook goes to a host that does not resolve. */
  undeliverable: number;
}

const SHAPES: Record<Exclude<Morning, "empty">, MorningShape> = {
  normal: { queue: QUEUES.normal, filedEarlier: 1800, rejected: 6, undeliverable: 4 },
  overloaded: { queue: QUEUES.overloaded, filedEarlier: 1500, rejected: 48, undeliverable: 18 },
};

const HOUR_MS = 3_600_000;
const BULK_SIZE = 1000;
const HISTORY_COMPANY = 2;
const WEBHOOK_COMPANY = 3;

export interface MorningScene extends BrowserScene {
  t: TestApp;
  /** The latest item that succeeded, with its application and registration numbers (none on an empty morning). */
  someItem: { workItemId: number; applicationNumber: string | null; registrationNumber: string | null } | undefined;
  /** A New item past its deadline, if the morning has one. */
  overdueItem: { workItemId: number } | undefined;
}

export async function withMorningScene(morning: Morning, body: (scene: MorningScene) => Promise<void>): Promise<void> {
  // The receivers' hosts resolved when the items were accepted (intake fails closed on a name that
  // does not) and stopped resolving since: the customer is moving hosts, as the stop's reason says.
  const resolvedAtIntake = async () => [{ address: "93.184.215.14", family: 4 as const }];
  const t = await createTestApp(sqliteBackend, { AUTHORITY_MAX_RPS: "0", WEBHOOK_TIMEOUT_MS: "2000", CONSOLE_TZ: "Europe/Amsterdam" }, { webhookLookup: resolvedAtIntake });
  try {
    const baseUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
    const admin = await createOperatorAccount(t.store, { email: "ops@example.com", role: "admin" });
    if (morning !== "empty") await seedMorning(t, SHAPES[morning], admin);
    const [latest] = await t.store.listAllWorkItems({ limit: 1, status: "Successful" });
    const [overdue] = await t.store.listAllWorkItems({ limit: 1, status: "New", deadlineBefore: new Date().toISOString() });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH });
    try {
      await body({
        t,
        baseUrl,
        admin,
        browser,
        someItem: latest && { workItemId: latest.workItemId, applicationNumber: latest.authority.applicationNumber, registrationNumber: registrationOf(latest)?.registrationNumber ?? null },
        overdueItem: overdue && { workItemId: overdue.workItemId },
      });
    } finally {
      await browser.close();
    }
  } finally {
    await t.close();
  }
}

/** The day first (filed by the bot, then moved back), then the queue, which files its last hour and leaves the rest waiting. */
async function seedMorning(t: TestApp, shape: MorningShape, admin: { email: string }): Promise<void> {
  const history = await t.tenant(HISTORY_COMPANY);
  const add = async (token: string, items: Array<Record<string, unknown>>) => {
    for (let start = 0; start < items.length; start += BULK_SIZE) {
      const payload = { items: items.slice(start, start + BULK_SIZE).map((overrides) => validWorkItem(overrides)) };
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreateBulk", headers: bearer(token), payload });
      assert.equal(response.statusCode, 200, response.body);
    }
  };
  const numbered = (count: number, item: (i: number) => Record<string, unknown>) => Array.from({ length: count }, (_, i) => item(i));
  await add(history.token, numbered(shape.filedEarlier, (i) => ({ customerReference: `DAY-${String(i).padStart(4, "0")}` })));
  await add(history.token, numbered(shape.rejected, (i) => ({ customerReference: `KVK-${i}`, senderChamberOfCommerceNo: { sendValue: "1234567" } })));
  const hooks = await t.tenant(WEBHOOK_COMPANY);
  await t.store.renameCompany(HISTORY_COMPANY, "De Vries Mestransport");
  await t.store.renameCompany(WEBHOOK_COMPANY, "Acme Transport");
  await add(hooks.token, numbered(shape.undeliverable, (i) => ({ customerReference: `HOOK-${i}`, webhookUrl: `https://hooks-${i % 3}.acme-transport.invalid/rvdm` })));
  await runOneBotPass(t);
  await createDispatcher({ store: t.store, config: t.config, owner: "scene" }).deliverDue();

  const pending = await t.store.listAllWebhookDeliveries({ companyId: WEBHOOK_COMPANY, status: "pending", limit: 1 });
  const operator = await t.store.findOperatorByEmail(admin.email);
  if (pending[0] && operator) {
    const action = actionBy(operator, "hooks-0.acme-transport.invalid does not resolve; the customer is moving hosts");
    assert.equal(await t.store.operatorStopWebhookDelivery(pending[0].deliveryId, action), "stopped");
  }
  spreadOverTheDay(t, HISTORY_COMPANY);
  await seedDeadlineQueue(t, shape.queue);
}

/** The history company's filings, moved back over the 23 hours before this one, busier in working hours in Amsterdam. */
function spreadOverTheDay(t: TestApp, companyId: number): void {
  assert.equal(t.config.store.kind, "sqlite");
  if (t.config.store.kind !== "sqlite") return;
  const db = new Database(t.config.store.path);
  try {
    db.pragma("busy_timeout = 5000");
    const items = db.prepare("SELECT work_item_id FROM work_items WHERE company_id = ? AND submitted_at IS NOT NULL ORDER BY work_item_id").all(companyId) as Array<{ work_item_id: number }>;
    const thisHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    const localHour = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Amsterdam", hour: "numeric", hourCycle: "h23" });
    const hours = Array.from({ length: 23 }, (_, index) => thisHour - (23 - index) * HOUR_MS);
    const weight = (start: number) => {
      const hour = Number(localHour.format(new Date(start)));
      return hour >= 7 && hour < 18 ? 6 : hour >= 18 && hour < 23 ? 2 : 0.5;
    };
    const slots = hours.flatMap((start) => Array.from({ length: Math.round(weight(start) * 4) }, (_, k) => start + ((k * 997) % 60) * 60_000));
    const move = db.prepare("UPDATE work_items SET submitted_at = ?, completed_at = ?, updated_at = ? WHERE company_id = ? AND work_item_id = ?");
    db.transaction(() => {
      items.forEach((item, index) => {
        const at = slots[(index * 7919) % slots.length]!;
        move.run(new Date(at).toISOString(), new Date(at + 90_000).toISOString(), new Date(at + 90_000).toISOString(), companyId, item.work_item_id);
      });
    })();
  } finally {
    db.close();
  }
}
