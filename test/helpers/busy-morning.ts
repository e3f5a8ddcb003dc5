/**
 * The busy morning of issue 48 ("Operators, second look"), on either store: four named companies
 * (two of them Acme), 48 items waiting with deadlines today and in the next days, 21 of them
 * overdue, three waiting without a deadline, the day's filings (succeeded, and rejected by the
 * authority), and one company whose webhook receiver answers 500 to every delivery, so that its
 * deliveries are retrying. Every item goes through intake or the store, every filing through the
 * real bot and the simulator, every delivery attempt through the real dispatcher.
 *
 * The deadlines are set from the time the morning is made, so that its overdue, at-risk, due-today
 * and later items are those whatever the hour: "today" is the due day of domain/due.ts.
 */
import assert from "node:assert/strict";
import { dueDay, type DueCalendar } from "../../src/domain/due.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { dueCalendarOf } from "../../src/operators/work-item-list.ts";
import { createDispatcher } from "../../src/webhooks/dispatcher.ts";
import type { Backend } from "./backends.ts";
import { runOneBotPass } from "./bot-harness.ts";
import { bearer, createTestApp, validWorkItem, type TestApp } from "./test-app.ts";
import { waitUntil } from "./waiting.ts";
import { startReceiver, type Receiver } from "./webhook-receiver.ts";

export const BUSY_COMPANIES = [
  { companyId: 41, name: "Acme Transport" },
  { companyId: 42, name: "Acme Agri" },
  { companyId: 43, name: "Boer & Zn. Logistiek" },
  { companyId: 44, name: "De Vries Mestransport" },
] as const;
/** The company whose receiver answers 500. */
export const HOOKED_COMPANY = 43;
export const OVERDUE_ITEMS = 21;
export const WAITING_ITEMS = 48;
const UNDATED_ITEMS = 3;
/** Each makes one delivery (its decision), tried once and refused: the 12 retrying. */
export const HOOKED_ITEMS = 12;
const FILED_ITEMS = 24;
const REJECTED_ITEMS = 4;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface BusyMorning {
  t: TestApp;
  receiver: Receiver;
  calendar: DueCalendar;
  /** When the deadlines were set from. */
  now: Date;
}

/** The deadlines of the waiting items: 21 overdue (some due in the same minute), then at risk, due today and in the next days. */
function waitingDeadlines(now: Date, calendar: DueCalendar): string[] {
  const end = dueDay(now, calendar).end.getTime();
  const at = (instant: number, times: number) => Array.from({ length: times }, () => new Date(Math.floor(instant / MINUTE) * MINUTE).toISOString());
  const t = now.getTime();
  return [
    ...at(t - 26 * HOUR, 8),
    ...at(t - 3 * HOUR, 8),
    ...at(t - 30 * MINUTE, 5),
    ...at(Math.min(t + HOUR, end - MINUTE), 4),
    ...at(end - 20 * MINUTE, 6),
    ...at(end + 11 * HOUR, 9),
    ...at(end + 35 * HOUR, 8),
  ];
}

/** Seeds the morning on `t`, whose webhooks may reach 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_NETWORKS). */
export async function seedBusyMorning(t: TestApp, receiver: Receiver, now = new Date()): Promise<void> {
  const tokens = new Map<number, string>();
  for (const { companyId, name } of BUSY_COMPANIES) {
    tokens.set(companyId, (await t.tenant(companyId)).token);
    await t.store.renameCompany(companyId, name);
  }
  const add = async (companyId: number, overrides: Record<string, unknown>) => {
    const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tokens.get(companyId)!), payload: validWorkItem(overrides) });
    assert.equal(response.statusCode, 200, response.body);
  };
  for (let i = 0; i < FILED_ITEMS; i++) await add(44, { customerReference: `DV-${String(i).padStart(3, "0")}` });
  for (let i = 0; i < REJECTED_ITEMS; i++) await add(41, { customerReference: `ACME-KVK-${i}`, senderChamberOfCommerceNo: { sendValue: "1234567" } });
  for (let i = 0; i < HOOKED_ITEMS; i++) await add(HOOKED_COMPANY, { customerReference: `BOER-${i}`, webhookUrl: receiver.url });
  await runOneBotPass(t);
  const dispatcher = createDispatcher({ store: t.store, config: t.config, owner: "busy-morning" });
  // A round takes a few deliveries of a company at a time; those tried wait for their backoff.
  await waitUntil("the hooked company's deliveries to be retrying", async () => {
    await dispatcher.deliverDue();
    const company = (await t.store.companyOverview({ now: new Date().toISOString() })).find((c) => c.companyId === HOOKED_COMPANY);
    return company !== undefined && company.retryingWebhookDeliveries === HOOKED_ITEMS;
  });

  const deadlines = waitingDeadlines(now, dueCalendarOf(t.config));
  assert.equal(deadlines.length, WAITING_ITEMS);
  const waiting = [...deadlines.map((deadlineAt, i) => ({ companyId: BUSY_COMPANIES[i % BUSY_COMPANIES.length]!.companyId, deadlineAt })), ...Array.from({ length: UNDATED_ITEMS }, () => ({ companyId: 42, deadlineAt: undefined }))];
  for (const [i, { companyId, deadlineAt }] of waiting.entries()) {
    const reference = `WAIT-${companyId}-${String(i).padStart(2, "0")}`;
    const item = { customerReference: reference, documentReference: null, webhookUrl: null, request: validWorkItem({ customerReference: reference }), ...(deadlineAt ? { deadlineAt } : {}) };
    const outcome = await t.store.addWorkItems({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: t.config.batchMaxItems, items: [item] });
    assert.equal(outcome.kind, "created");
  }
}

/** A test app of `backend` with the busy morning in it, and its receiver; closed after `body`. */
export async function withBusyMorning<T>(backend: Backend, body: (morning: BusyMorning) => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const receiver = await startReceiver(() => 500);
  const t = await createTestApp(backend, { AUTHORITY_MAX_RPS: "0", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", CONSOLE_TZ: "Europe/Amsterdam", ...env });
  try {
    const now = new Date();
    await seedBusyMorning(t, receiver, now);
    return await body({ t, receiver, calendar: dueCalendarOf(t.config), now });
  } finally {
    await t.close();
    await receiver.close();
  }
}
