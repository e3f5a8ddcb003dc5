/**
 * `npm run bench:bot-pass -- [flags]`: how long ONE bot pass takes over many companies, per store.
 *
 * For each store and round, on fresh data (a temp SQLite file; a fresh PostgreSQL schema chosen
 * by the connection string's search_path): creates the companies and N items per company through
 * the public Store API, each item with a webhook URL, then times one `runBotOnce` pass against the
 * real authority simulator, started in this process on a loopback port and reached through the
 * real http adapter (`openAuthority` with AUTHORITY_URL unset, as `bot run-once` does). The pass
 * takes up every company's Open batch into the filing queue, claims items from it and files every item. After
 * it, the webhook outbox rows the pass wrote are claimed in the dispatcher's page size until none
 * is left (claimed only; nothing is sent).
 *
 * Reported per round and as the median of the rounds: the pass's duration, items filed per
 * second, the CPU time this process spent in the pass (the bot and the simulator; with SQLite
 * also the store, which runs in-process; not the PostgreSQL server), the time inside the pass's
 * two sweeps (`queueBatches` over every company, and `claimFilingWork` over all its calls) and the time of the
 * outbox claim sweep. Bot settings are the production defaults (BOT_CONCURRENCY 8,
 * BATCH_MAX_ITEMS 1000). Every round checks that every item was filed and registered once, and
 * that every outbox row was claimed. On a shared machine the durations vary a lot between
 * rounds: compare before and after with runs made close together, and look at CPU s too.
 *
 *   npm run bench:bot-pass                                   both stores, 1,000 companies × 2 items, 3 rounds
 *   npm run bench:bot-pass -- --stores sqlite --rounds 5
 *   npm run bench:bot-pass -- --help
 *
 * Nothing is written to bench/results/; the table goes to stdout, progress to stderr.
 */
import { loadavg } from "node:os";
import { newWorkerId, openAuthority } from "../src/bot/authority.ts";
import { createAuthorityGate } from "../src/bot/authority-gate.ts";
import { runBotOnce } from "../src/bot/run-once.ts";
import { loadConfig, type Config } from "../src/config.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../src/domain/views.ts";
import { forEachConcurrently } from "../src/lib/concurrency.ts";
import { openStore } from "../src/store/open-store.ts";
import type { Store } from "../src/store/store.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { workItemBodies } from "./lib/routes.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:bot-pass -- [flags]
  --stores A,B          sqlite, postgres or both (default sqlite,postgres)
  --companies N         companies (default 1000)
  --items N             items per company (default 2)
  --rounds N            timed passes per store, each on fresh data; the median is reported (default 3)
  --postgres-url URL    database the fresh schema is made in
                        (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test)
  --keep                keep the temp SQLite folder / PostgreSQL schema of each round
Takes about 10-40 s per round on a 2-core machine at the defaults.`;

type StoreKind = "sqlite" | "postgres";

interface Options {
  stores: StoreKind[];
  companies: number;
  itemsPerCompany: number;
  rounds: number;
  postgresUrl: string;
  keep: boolean;
}

interface Round {
  setupMs: number;
  passMs: number;
  itemsPerSecond: number;
  /** CPU time of this process during the pass (bot, simulator, and for SQLite the store itself). */
  cpuMs: number;
  closeMs: number;
  claimMs: number;
  claimCalls: number;
  outboxMs: number;
  outboxClaims: number;
}

/** Never called: the outbox rows are only claimed. */
const WEBHOOK_URL = "https://receiver.example/hooks/work-items";
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function parseOptions(argv: string[]): Options {
  const values = benchFlags(argv, USAGE, {
    stores: { type: "string", default: "sqlite,postgres" },
    companies: { type: "string", default: "1000" },
    items: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    "postgres-url": { type: "string", default: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
    keep: { type: "boolean", default: false },
  });
  const whole = (name: string, text: string) => wholeNumber(name, text);
  const stores = values.stores.split(",").map((name) => name.trim());
  for (const name of stores) if (name !== "sqlite" && name !== "postgres") throw new Error(`--stores: unknown store ${JSON.stringify(name)}`);
  return {
    stores: stores as StoreKind[],
    companies: whole("companies", values.companies),
    itemsPerCompany: whole("items", values.items),
    rounds: whole("rounds", values.rounds),
    postgresUrl: values["postgres-url"],
    keep: values.keep,
  };
}

/** Companies 1..n and their items, through the Store API, several calls in flight as under load. */
async function seed(store: Store, options: Options, config: Config): Promise<void> {
  const companyIds = Array.from({ length: options.companies }, (_, i) => i + 1);
  await forEachConcurrently(companyIds, 16, async (companyId) => void (await store.createCompany({ companyId, name: `Bot pass ${companyId}` })));
  // Later than any run of this bench, so the simulator registers every item.
  const exportDate = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const items = companyIds.flatMap((companyId) => Array.from({ length: options.itemsPerCompany }, (_, i) => ({ companyId, i })));
  await forEachConcurrently(items, 64, async ({ companyId, i }) => {
    const request: Record<string, unknown> = { ...(JSON.parse(workItemBodies(companyId, `bot-${i}`)[0]!) as Record<string, unknown>), exportDate };
    const outcome = await store.addWorkItem({
      companyId,
      workType: WORK_TYPE_AUTHORITY_RVDM,
      customerReference: String(request.customerReference),
      documentReference: typeof request.documentReference === "string" ? request.documentReference : null,
      webhookUrl: WEBHOOK_URL,
      request,
      batchMaxItems: config.batchMaxItems,
    });
    if (outcome.kind !== "created") throw new Error(`seeding: addWorkItem answered ${outcome.kind}`);
  });
}

/** The store as the bot sees it, with the time spent in its two sweeps added up. */
function timingSweeps(store: Store) {
  const spent = { queueBatches: { ms: 0, calls: 0 }, claimFilingWork: { ms: 0, calls: 0 } };
  const timed = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== "function") return value;
      const method = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (name !== "queueBatches" && name !== "claimFilingWork") return method;
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await method(...args);
        } finally {
          spent[name].ms += performance.now() - started;
          spent[name].calls += 1;
        }
      };
    },
  });
  return { timed, spent };
}

/** Claims every due outbox row as the dispatcher does (company by company, in its page size); returns the rows and the claims it took. */
async function claimOutbox(store: Store, config: Config): Promise<{ rows: number; claims: number }> {
  const limit = config.webhookConcurrency * 4;
  const owner = newWorkerId();
  let rows = 0;
  let claims = 0;
  for (;;) {
    const now = new Date().toISOString();
    const leaseExpiresAt = new Date(Date.parse(now) + config.webhookLeaseSeconds * 1000).toISOString();
    const claimed = (await store.claimDueWebhookDeliveries({ owner, now, leaseExpiresAt, limit, maxInFlight: config.webhookCompanyMaxInFlight })).length;
    claims += 1;
    rows += claimed;
    if (claimed < limit) return { rows, claims };
  }
}

async function runRound(kind: StoreKind, options: Options): Promise<Round> {
  const location: BenchStore = kind === "sqlite" ? sqliteBenchStore(options.keep) : await postgresBenchStore(options.postgresUrl, options.keep, "bot_pass");
  // No calls-per-second cap: the pass measures the bot and the store, not the throttle.
  const config = loadConfig({ DATABASE_URL: location.databaseUrl, LOG_LEVEL: "warn", AUTHORITY_MAX_RPS: "0" });
  const store = await openStore(config.store);
  const total = options.companies * options.itemsPerCompany;
  try {
    let started = performance.now();
    await seed(store, options, config);
    const setupMs = performance.now() - started;
    // A fresh simulator per round: it remembers idempotency keys, and item ids restart at 1.
    const authority = await openAuthority(config);
    try {
      const { timed, spent } = timingSweeps(store);
      const cpuBefore = process.cpuUsage();
      started = performance.now();
      const owner = newWorkerId();
      const counts = await runBotOnce({ store: timed, gate: createAuthorityGate({ store: timed, adapter: authority.adapter, config, owner }), config, owner });
      const passMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      const registrations = authority.sim?.stats().registrations;
      const batches = options.companies * Math.ceil(options.itemsPerCompany / config.batchMaxItems);
      if (counts.succeeded !== total || counts.failed + counts.retried !== 0 || counts.batches !== batches || registrations !== total) {
        throw new Error(`the pass did not file every item once: ${JSON.stringify(counts)}, ${registrations} registrations; expected ${total} items in ${batches} batches`);
      }
      started = performance.now();
      const outbox = await claimOutbox(store, config);
      const outboxMs = performance.now() - started;
      if (outbox.rows !== total) throw new Error(`the outbox claim sweep found ${outbox.rows} rows, expected ${total}`);
      return {
        setupMs,
        passMs,
        itemsPerSecond: total / (passMs / 1000),
        cpuMs: (cpu.user + cpu.system) / 1000,
        closeMs: spent.queueBatches.ms,
        claimMs: spent.claimFilingWork.ms,
        claimCalls: spent.claimFilingWork.calls,
        outboxMs,
        outboxClaims: outbox.claims,
      };
    } finally {
      await authority.close();
    }
  } finally {
    await store.close();
    await location.cleanup();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const COLUMNS = ["store", "round", "setup s", "pass s", "items/s", "CPU s", "queueBatches ms", "claimFilingWork ms (calls)", "outbox claim ms (claims)"];

function row(store: string, round: string, r: Round): string[] {
  const ms = (n: number) => n.toFixed(0);
  return [store, round, (r.setupMs / 1000).toFixed(1), (r.passMs / 1000).toFixed(2), r.itemsPerSecond.toFixed(0), (r.cpuMs / 1000).toFixed(2), ms(r.closeMs), `${ms(r.claimMs)} (${r.claimCalls})`, `${ms(r.outboxMs)} (${r.outboxClaims})`];
}

function table(rows: string[][]): string {
  const widths = COLUMNS.map((name, i) => Math.max(name.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(COLUMNS), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

async function main(): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const total = options.companies * options.itemsPerCompany;
  const loadBefore = loadavg();
  const rows: string[][] = [];
  for (const kind of options.stores) {
    const rounds: Round[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      log(`${kind}, round ${round}/${options.rounds}: ${options.companies.toLocaleString("en-US")} companies, ${total.toLocaleString("en-US")} items`);
      const result = await runRound(kind, options);
      log(`  pass ${(result.passMs / 1000).toFixed(2)} s, ${result.itemsPerSecond.toFixed(0)} items/s (setup ${(result.setupMs / 1000).toFixed(1)} s)`);
      rounds.push(result);
      rows.push(row(kind, String(round), result));
    }
    const pick = (key: keyof Round) => median(rounds.map((r) => r[key]));
    const middle: Round = {
      setupMs: pick("setupMs"),
      passMs: pick("passMs"),
      itemsPerSecond: pick("itemsPerSecond"),
      cpuMs: pick("cpuMs"),
      closeMs: pick("closeMs"),
      claimMs: pick("claimMs"),
      claimCalls: pick("claimCalls"),
      outboxMs: pick("outboxMs"),
      outboxClaims: pick("outboxClaims"),
    };
    rows.push(row(kind, "median", middle));
  }
  const loadAfter = loadavg();
  process.stdout.write(
    `\nOne bot pass over ${options.companies.toLocaleString("en-US")} companies × ${options.itemsPerCompany} items (${total.toLocaleString("en-US")} items, each with a webhook URL), ` +
      `fresh data per round; BOT_CONCURRENCY and BATCH_MAX_ITEMS at their defaults; authority simulator in this process, no latency.\n` +
      `CPU s: this process only (bot, simulator, and the SQLite store; not the PostgreSQL server). Each column's median is taken on its own. Load average ${loadBefore.map((n) => n.toFixed(2)).join(" ")} before, ${loadAfter.map((n) => n.toFixed(2)).join(" ")} after.\n\n` +
      `${table(rows)}\n`,
  );
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench:bot-pass failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
