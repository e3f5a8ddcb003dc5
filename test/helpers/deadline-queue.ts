/**
 * A queue by deadline (SPEC §14) on a test app, for the Deadlines chart's tests and screenshots:
 * items the bot filed just now (the last hour's rate, through the real bot and the simulator),
 * then items waiting for their deadlines, added through the store with the deadlines given
 * (intake would work them out from exportDate).
 */
import assert from "node:assert/strict";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { runOneBotPass } from "./bot-harness.ts";
import { bearer, validWorkItem, type TestApp } from "./test-app.ts";

export interface QueueShape {
  /** Items the bot files before the waiting ones arrive: the last hour's rate. */
  filedLastHour: number;
  /** Waiting items whose deadline passed two hours ago, spread over three companies. */
  overdue: number;
  /** Waiting items per coming deadline, `inHours` hours after the start of this hour. */
  deadlines: Array<{ inHours: number; items: number; companies: number }>;
}

/** Three queues to look at: a quiet morning, an ordinary day, and a crunch the bot cannot keep up with. */
export const QUEUES = {
  little: { filedLastHour: 12, overdue: 0, deadlines: [{ inHours: 3, items: 4, companies: 2 }, { inHours: 27, items: 2, companies: 1 }] },
  normal: {
    filedLastHour: 240,
    overdue: 3,
    deadlines: [
      { inHours: 2, items: 180, companies: 14 },
      { inHours: 26, items: 420, companies: 31 },
      { inHours: 50, items: 260, companies: 22 },
      { inHours: 74, items: 90, companies: 9 },
      { inHours: 98, items: 40, companies: 5 },
    ],
  },
  overloaded: {
    filedLastHour: 150,
    overdue: 85,
    deadlines: [
      { inHours: 2, items: 2600, companies: 48 },
      { inHours: 26, items: 1900, companies: 40 },
      { inHours: 50, items: 700, companies: 25 },
      { inHours: 74, items: 120, companies: 8 },
      { inHours: 98, items: 60, companies: 4 },
    ],
  },
} satisfies Record<string, QueueShape>;

const NAMES = ["Acme Transport", "Boer & Zn. Logistiek", "Veenstra Mest BV", "De Groot Agri", "Hollandia Export", "Van Dijk <Trucking>", "Noordkade Cargo", "Kempen Vee"];
const companyName = (companyId: number) => `${NAMES[companyId % NAMES.length]} ${Math.floor(companyId / NAMES.length) + 1}`;
const FIRST_WAITING_COMPANY = 100;
const HOUR_MS = 3_600_000;

/**
 * Files `filedLastHour` items of one company through the bot (the test app needs
 * AUTHORITY_MAX_RPS=0 for hundreds), then adds the waiting items. Returns their deadlines,
 * earliest first (the overdue one first when there is one).
 */
export async function seedDeadlineQueue(t: TestApp, shape: QueueShape, now = new Date()): Promise<string[]> {
  if (shape.filedLastHour > 0) {
    const filer = await t.tenant(1);
    for (let i = 0; i < shape.filedLastHour; i++) {
      const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(filer.token), payload: validWorkItem({ customerReference: `FILED-${i}` }) });
      assert.equal(response.statusCode, 200, response.body);
    }
    const counts = await runOneBotPass(t);
    assert.equal(counts.submitted, shape.filedLastHour, JSON.stringify(counts));
  }
  const hourStart = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const overdueAt = new Date(hourStart - 2 * HOUR_MS).toISOString();
  const groups = [
    ...(shape.overdue > 0 ? [{ deadlineAt: overdueAt, items: shape.overdue, companies: Math.min(3, shape.overdue) }] : []),
    ...shape.deadlines.map((d) => ({ deadlineAt: new Date(hourStart + d.inHours * HOUR_MS).toISOString(), items: d.items, companies: d.companies })),
  ];
  const known = new Set<number>();
  for (const group of groups) {
    for (let c = 0; c < group.companies; c++) {
      const companyId = FIRST_WAITING_COMPANY + c;
      if (!known.has(companyId)) await t.store.createCompany({ companyId, name: companyName(companyId) });
      known.add(companyId);
      const count = Math.floor(group.items / group.companies) + (c < group.items % group.companies ? 1 : 0);
      const items = Array.from({ length: count }, (_, i) => ({
        customerReference: `WAIT-${companyId}-${i}`,
        documentReference: null,
        webhookUrl: null,
        request: validWorkItem({ customerReference: `WAIT-${companyId}-${i}` }),
        deadlineAt: group.deadlineAt,
      }));
      const outcome = await t.store.addWorkItems({ companyId, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: t.config.batchMaxItems, items });
      assert.equal(outcome.kind, "created");
    }
  }
  return groups.map((group) => group.deadlineAt);
}
