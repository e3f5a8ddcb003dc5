/**
 * One crunch through one build's real bot (bench:deadlines): a fresh store with the companies, the
 * simulator in its own process, the planned items added through the build's store at their
 * times with their deadlines, the simulator's outage switched on and off, and `runBotOnce` called
 * pass after pass until every item is submitted or the drain time is over. What it returns is
 * raw: per item when it arrived, was due and was submitted, the outage, and the simulator's
 * calls in flight as read every SAMPLE_MS.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import type { AuthorityAdapter } from "../../src/authority/protocol.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { forEachConcurrently } from "../../src/lib/concurrency.ts";
import type { BotBuild, BuildConfig, BuildStore } from "./bot-build.ts";
import type { PlannedItem } from "./crunch.ts";
import { RunningSum, type Interval } from "./intervals.ts";
import { registrableItem, startSimulator, type BenchSimulator } from "./simulator.ts";
import type { BenchStore } from "./stores.ts";

export interface CrunchSettings {
  latencyMs: number;
  concurrency: number;
  /** AUTHORITY_MAX_RPS; 0 = none. */
  rps: number;
  outageAtMs: number;
  outageMs: number;
  /** How long after the last deadline the bot may go on to submit what is left. */
  drainMs: number;
  /** `every-second`: as BOT_SCHEDULE `* * * * * *` (no overlap); `back-to-back`: the next pass at once (after 100 ms when a pass made no call). */
  passes: "every-second" | "back-to-back";
  /** Extra environment for the build's config (BOT_CONCURRENCY, BOT_CLAIM_SIZE, …). */
  env: Record<string, string>;
}

export interface ItemRecord {
  planned: PlannedItem;
  workItemId: number;
  /** Epoch ms: once the add had committed. */
  arrivedAt: number;
  deadlineAt: number;
  /** authority.submittedAt as the build's store has it; null when never submitted. */
  submittedAt: number | null;
  status: string;
}

export interface CrunchRun {
  build: string;
  config: BuildConfig;
  items: ItemRecord[];
  startedAt: number;
  endedAt: number;
  outage: Interval[];
  /** The simulator's inFlightMs as read over the run. */
  inFlight: RunningSum;
  maxInFlight: number;
  calls: { submits: number; statuses: number };
  passes: number;
  passErrors: string[];
}

const SAMPLE_MS = 25;
const PROGRESS_MS = 5000;

/** The breaker's time on the compressed clock: 60 s → 1 s. */
export const BREAKER_MS = 1000;
/** Policies scaled to the compressed clock (one bench second for a minute): breaker 60 s → 1 s, retries 30 s…30 min → 0.5…30 s. */
const COMPRESSED_POLICIES = { AUTHORITY_BREAKER_SECONDS: String(BREAKER_MS / 1000), BOT_RETRY_BASE_MS: "500", BOT_RETRY_MAX_MS: "30000" };

/** The adapter, counting calls and noting the items the authority accepted. */
function counting(adapter: AuthorityAdapter) {
  const seen = { submits: 0, statuses: 0, accepted: new Set<string>() };
  const wrapped: AuthorityAdapter = {
    ...adapter,
    name: adapter.name,
    async submit(submission) {
      seen.submits += 1;
      const answer = await adapter.submit(submission);
      if (answer.kind === "accepted") seen.accepted.add(submission.idempotencyKey);
      return answer;
    },
    status(applicationNumber) {
      seen.statuses += 1;
      return adapter.status(applicationNumber);
    },
    close: () => adapter.close(),
  };
  return { adapter: wrapped, seen };
}

export async function runCrunch(build: BotBuild, location: BenchStore, plan: PlannedItem[], settings: CrunchSettings, log: (line: string) => void): Promise<CrunchRun> {
  const config = build.loadConfig({
    DATABASE_URL: location.databaseUrl,
    LOG_LEVEL: "warn",
    AUTHORITY_MAX_CONCURRENCY: String(settings.concurrency),
    AUTHORITY_MAX_RPS: String(settings.rps),
    ...COMPRESSED_POLICIES,
    ...settings.env,
  });
  const store = await build.openStore(config);
  let sim: BenchSimulator | undefined;
  let http: AuthorityAdapter | undefined;
  try {
    const companies = [...new Set(plan.map((item) => item.companyId))].sort((a, b) => a - b);
    const allCompanies = Math.max(...companies);
    await forEachConcurrently(
      Array.from({ length: allCompanies }, (_, i) => i + 1),
      16,
      async (companyId) => void (await store.createCompany({ companyId, name: `Crunch ${companyId}` })),
    );
    sim = await startSimulator(settings.latencyMs);
    http = build.createAdapter({ baseUrl: sim.url, timeoutMs: config.authorityTimeoutMs });
    const { adapter, seen } = counting(http);
    const owner = `bench-deadlines/${process.pid}/${randomBytes(4).toString("hex")}`;
    const gate = build.createGate({ store, adapter, config, owner });
    return await crunch({ build, config, store, sim, gate, owner, seen, plan, settings, log });
  } finally {
    await http?.close();
    await sim?.close();
    await store.close();
  }
}

interface Crunch {
  build: BotBuild;
  config: BuildConfig;
  store: BuildStore;
  sim: BenchSimulator;
  gate: unknown;
  owner: string;
  seen: ReturnType<typeof counting>["seen"];
  plan: PlannedItem[];
  settings: CrunchSettings;
  log: (line: string) => void;
}

async function crunch({ build, config, store, sim, gate, owner, seen, plan, settings, log }: Crunch): Promise<CrunchRun> {
  const startedAt = Date.now() + 500;
  const lastDeadline = startedAt + Math.max(...plan.map((item) => item.deadlineMs));
  const arrived: Array<{ item: PlannedItem; workItemId: number; arrivedAt: number }> = [];
  const outage: Array<[number, number]> = [];
  const inFlight = new RunningSum();
  let maxInFlight = 0;
  let now = { inFlight: 0 };
  let passes = 0;
  const passErrors: string[] = [];
  const stopping = new AbortController();

  const sample = async () => {
    const totals = await sim.totals();
    inFlight.add(totals.readAt, totals.inFlightMs);
    maxInFlight = Math.max(maxInFlight, totals.maxInFlight);
    now = totals;
  };
  const sampler = setInterval(() => void sample().catch(() => undefined), SAMPLE_MS);
  const progress = setInterval(() => {
    const down = outage.some(([from, to]) => from <= Date.now() && Date.now() < to);
    log(
      `${build.label}: +${Math.round((Date.now() - startedAt) / 1000)} s, added ${arrived.length}/${plan.length}, submitted ${seen.accepted.size}, ` +
        `calls ${seen.submits} submits + ${seen.statuses} status, ${now.inFlight} in flight${down ? ", authority down" : ""}, ${passes} passes`,
    );
  }, PROGRESS_MS);

  // The outage: switched on and off at its times; its window is what the optimum leaves out.
  const switchOutage = async () => {
    await sleep(startedAt + settings.outageAtMs - Date.now());
    if (settings.outageMs <= 0) return;
    await sample();
    const from = Date.now();
    await sim.configure({ outage: true });
    outage.push([from, Infinity]);
    await sleep(settings.outageMs);
    await sample();
    outage[0]![1] = Date.now();
    await sim.configure({ outage: false });
    await sample();
  };

  // Arrivals: each due item added at its time, one bulk add per company and tick.
  const arrive = async () => {
    const pending = new Set<Promise<void>>();
    for (let next = 0; next < plan.length; ) {
      const wait = startedAt + plan[next]!.atMs - Date.now();
      if (wait > 0) await sleep(wait);
      const due: PlannedItem[] = [];
      while (next < plan.length && startedAt + plan[next]!.atMs <= Date.now()) due.push(plan[next++]!);
      for (const [companyId, items] of groupBy(due, (item) => item.companyId)) {
        const add = store
          .addWorkItems({
            companyId,
            workType: WORK_TYPE_AUTHORITY_RVDM,
            batchMaxItems: config.batchMaxItems,
            items: items.map((item) => ({
              customerReference: `crunch-${item.index}`,
              documentReference: null,
              webhookUrl: null,
              request: registrableItem(`crunch-${item.index}`),
              deadlineAt: new Date(startedAt + item.deadlineMs).toISOString(),
            })),
          })
          .then((outcome) => {
            if (outcome.kind !== "created") throw new Error(`addWorkItems answered ${outcome.kind}`);
            const at = Date.now();
            items.forEach((item, i) => arrived.push({ item, workItemId: outcome.keys[i]!.workItemId, arrivedAt: at }));
          });
        pending.add(add);
        void add.finally(() => pending.delete(add)).catch(() => undefined);
      }
    }
    await Promise.all(pending);
  };

  // The bot: pass after pass, as the bot's cron would call it.
  const bot = async () => {
    while (!stopping.signal.aborted) {
      const callsBefore = seen.submits + seen.statuses;
      try {
        // As a worker's schedule would tell it (an older build ignores it): a pass still filing at
        // the next second takes up what arrived meanwhile.
        const nextPassAt = settings.passes === "every-second" ? () => new Date(Math.floor(Date.now() / 1000) * 1000 + 1000) : undefined;
        await build.runOnce({ store, gate, config, owner, signal: stopping.signal, ...(nextPassAt ? { nextPassAt } : {}) });
      } catch (error) {
        if (passErrors.length < 5) passErrors.push(error instanceof Error ? error.message : String(error));
      }
      passes += 1;
      const pause = settings.passes === "every-second" ? 1000 - (Date.now() % 1000) : seen.submits + seen.statuses === callsBefore ? 100 : 0;
      if (pause > 0) await sleep(pause, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };

  await sleep(startedAt - Date.now());
  const outageDone = switchOutage();
  const botDone = bot();
  try {
    await arrive();
    while (seen.accepted.size < plan.length && Date.now() < lastDeadline + settings.drainMs) await sleep(100);
  } finally {
    stopping.abort();
    await botDone;
    await outageDone.catch(() => undefined);
    clearInterval(sampler);
    clearInterval(progress);
  }
  const endedAt = Date.now();
  await sample();
  log(`${build.label}: stopped after ${Math.round((endedAt - startedAt) / 1000)} s and ${passes} passes; reading the items back`);
  return {
    build: build.label,
    config,
    items: await readBack(store, arrived, startedAt),
    startedAt,
    endedAt,
    outage,
    inFlight,
    maxInFlight,
    calls: { submits: seen.submits, statuses: seen.statuses },
    passes,
    passErrors,
  };
}

/** Map.groupBy, which Node 20 lacks. */
function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

/** Each item's submittedAt and status, as the build's store has them. */
async function readBack(store: BuildStore, arrived: Array<{ item: PlannedItem; workItemId: number; arrivedAt: number }>, startedAt: number): Promise<ItemRecord[]> {
  const byCompany = groupBy(arrived, (a) => a.item.companyId);
  const records: ItemRecord[] = [];
  await forEachConcurrently([...byCompany], 8, async ([companyId, items]) => {
    const views = new Map((await store.listWorkItems(companyId, { limit: items.length + 10 })).map((view) => [view.workItemId, view]));
    for (const { item, workItemId, arrivedAt } of items) {
      const view = views.get(workItemId);
      if (!view) throw new Error(`item ${workItemId} of company ${companyId} is not in the store`);
      const submittedAt = view.authority.submittedAt === null ? null : Date.parse(view.authority.submittedAt);
      records.push({ planned: item, workItemId, arrivedAt, deadlineAt: startedAt + item.deadlineMs, submittedAt, status: view.status });
    }
  });
  return records.sort((a, b) => a.planned.index - b.planned.index);
}
