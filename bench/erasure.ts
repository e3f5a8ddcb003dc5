/**
 * `npm run bench:erasure -- [flags]`: erasing and exporting (SPEC §22) on a store of `--items`
 * items, on SQLite and PostgreSQL, while other companies add over loopback HTTP.
 *
 * Per store: a fresh location with the real migrations, twelve companies made with the real CLI,
 * and bulk SQL (bench/lib/stores.ts's preload) giving company 1 `--items` items and company 2 as
 * many, all Successful a day ago. The production build serves the API (ROLE=api), and `--clients`
 * clients add items for companies 3–12 one after another for the whole run, each add timed. Then,
 * each in a process of its own, with `--baseline` seconds of intake alone before it:
 *
 *   (c) export   `companies export --company-id 1` to /dev/null: items/s, and the process's RSS
 *                sampled every 100 ms (max − min: constant memory means it does not grow with N)
 *   (a) erase    `companies erase --company-id 1`: items/s over its deleting phase (its 5 s wait
 *                for the revoked keys to be refused everywhere left out), intake p99 during it
 *                beside the baseline just before it
 *   (d) space    `db status` before and after the erase (half the items), then `db vacuum`:
 *                the store's pages, free pages and file size (SQLite), the schema's size (PostgreSQL)
 *   (b) sweep    the item sweep (bench/lib/sweep-expired.ts, the worker's bounds, passes back to
 *                back) over company 2's expired items: items/s, intake p99 beside the baseline
 *
 * Writes bench/results/<timestamp>-erasure.{json,md}; the table goes to stdout, progress to stderr.
 *
 *   npm run bench:erasure                                  both stores, 1,000,000 items (each phase)
 *   npm run bench:erasure -- --items 20000 --store sqlite
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StorageSize } from "../src/store/store.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { DEFAULT_POSTGRES_URL } from "./lib/seeded-store-options.ts";
import { buildProduction, createTenants, login, ROOT, startServer } from "./lib/setup.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";
import { UNIQUE_MARKER, workItemBodies } from "./lib/routes.ts";

const USAGE = `usage: npm run bench:erasure -- [flags]
  --store sqlite|postgres|both   stores to measure (default both)
  --items N                      items of the company erased, and as many expired for the sweep (default 1000000)
  --clients N                    clients adding for other companies throughout (default 4)
  --baseline N                   seconds of intake alone before each phase (default 10)
  --postgres-url URL             PostgreSQL server (default ${DEFAULT_POSTGRES_URL})
  --keep                         keep the temp SQLite folder / PostgreSQL schema`;

const values = benchFlags(process.argv.slice(2), USAGE, {
  store: { type: "string", default: "both" },
  items: { type: "string", default: "1000000" },
  clients: { type: "string", default: "4" },
  baseline: { type: "string", default: "10" },
  "postgres-url": { type: "string", default: DEFAULT_POSTGRES_URL },
  keep: { type: "boolean", default: false },
});
const stores = values.store === "both" ? (["sqlite", "postgres"] as const) : values.store === "sqlite" || values.store === "postgres" ? ([values.store] as const) : undefined;
if (!stores) throw new Error(`--store: sqlite, postgres or both, got ${JSON.stringify(values.store)}`);
const items = wholeNumber("items", values.items, 1000);
const clients = wholeNumber("clients", values.clients);
const baselineMs = wholeNumber("baseline", values.baseline) * 1000;

const LEAVING = 1;
const EXPIRED = 2;
const INTAKE_COMPANIES = 10;
/** The preload's items finished a day ago: past a retention of half a day. */
const RETENTION_DAYS = "0.5";

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

interface Add {
  at: number;
  ms: number;
  ok: boolean;
}

/** Adds over HTTP for the intake companies, `clients` at a time, until stopped; each add timed. */
function startIntake(baseUrl: string, tenants: Array<{ companyId: number; token: string }>): { adds: Add[]; stop(): Promise<void> } {
  const adds: Add[] = [];
  const bodies = tenants.map((tenant) => workItemBodies(tenant.companyId)[1]!);
  let running = true;
  let sequence = 0;
  const client = async (index: number) => {
    while (running) {
      const tenant = (index + sequence) % tenants.length;
      const at = performance.now();
      const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenants[tenant]!.token}`, "content-type": "application/json" },
        body: bodies[tenant]!.replace(UNIQUE_MARKER, `erasure-${sequence++}`),
      });
      await response.arrayBuffer();
      adds.push({ at, ms: performance.now() - at, ok: response.ok });
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, index) => client(index)));
  return {
    adds,
    async stop() {
      running = false;
      await done;
    },
  };
}

interface IntakeFigures {
  adds: number;
  errors: number;
  p50: number;
  p99: number;
}

function intakeBetween(adds: Add[], from: number, to: number): IntakeFigures {
  const within = adds.filter((add) => add.at >= from && add.at < to);
  const ms = within.map((add) => add.ms).sort((a, b) => a - b);
  return { adds: within.length, errors: within.filter((add) => !add.ok).length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

interface ChildRun {
  code: number | null;
  stdout: string;
  /** stderr lines with the time each came (performance.now()). */
  lines: Array<{ at: number; line: string }>;
  startedAt: number;
  endedAt: number;
  /** RSS samples every 100 ms, when asked for: when (performance.now()) and bytes. */
  rss: Array<{ at: number; bytes: number }>;
}

/** Runs a command of the production build (or a tsx script) as a process of its own. */
function runChild(args: string[], store: BenchStore, options: { sampleRss?: boolean; discardStdout?: boolean } = {}): Promise<ChildRun> {
  const env = { ...process.env, DATABASE_URL: store.databaseUrl, LOG_LEVEL: "warn", NODE_ENV: "production" };
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", options.discardStdout ? "ignore" : "pipe", "pipe"] });
  const run: ChildRun = { code: null, stdout: "", lines: [], startedAt: performance.now(), endedAt: 0, rss: [] };
  child.stdout?.on("data", (chunk: Buffer) => (run.stdout += chunk.toString()));
  let partial = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) run.lines.push({ at: performance.now(), line });
  });
  const sampler = options.sampleRss
    ? setInterval(() => {
        const rss = /VmRSS:\s+(\d+) kB/.exec(safeRead(`/proc/${child.pid}/status`))?.[1];
        if (rss) run.rss.push({ at: performance.now(), bytes: Number(rss) * 1024 });
      }, 100)
    : undefined;
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(sampler);
      run.code = code;
      run.endedAt = performance.now();
      if (code !== 0) reject(new Error(`${args.join(" ")} exited ${code}: ${run.lines.map((l) => l.line).join("\n").slice(-2000)}`));
      else resolve(run);
    });
  });
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

const cli = (...args: string[]) => [join(ROOT, "bin", "cli.mjs"), ...args];

async function storageOf(store: BenchStore): Promise<StorageSize> {
  const run = await runChild(cli("db", "status", "--json"), store);
  return (JSON.parse(run.stdout) as { storage: StorageSize }).storage;
}

interface StoreFigures {
  store: string;
  description: string;
  items: number;
  seedSeconds: number;
  export: { itemsPerSecond: number; seconds: number; rssMinMb: number; rssMaxMb: number; rssGrowthMb: number; rssGrowthStreamingMb: number };
  erase: { itemsPerSecond: number; deletingSeconds: number; wholeSeconds: number; before: IntakeFigures; during: IntakeFigures; p99Ratio: number };
  sweep: { itemsPerSecond: number; seconds: number; passes: number; before: IntakeFigures; during: IntakeFigures; p99Ratio: number };
  space: { seeded: StorageSize; afterErase: StorageSize; afterVacuum: StorageSize | null };
}

async function measure(kind: "sqlite" | "postgres"): Promise<StoreFigures> {
  const store = kind === "sqlite" ? sqliteBenchStore(values.keep) : await postgresBenchStore(values["postgres-url"], values.keep, "erasure");
  try {
    log(`${kind}: companies and keys through the CLI`);
    const tenants = await createTenants(store, 2 + INTAKE_COMPANIES);
    const seedStart = performance.now();
    const seeded = (done: number) => log(`${kind}: seeded ${done.toLocaleString("en")} of ${(2 * items).toLocaleString("en")} items`);
    await store.preload(items, [LEAVING], 1000, seeded);
    await store.preload(2 * items, [EXPIRED], 1000, seeded);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const server = await startServer(store, undefined);
    const baseUrl = `http://127.0.0.1:${server.port}`;
    const intakeTenants = await Promise.all(tenants.slice(2).map(async (t) => ({ companyId: t.companyId, token: await login(baseUrl, t.apiKey, t.secret) })));
    const intake = startIntake(baseUrl, intakeTenants);
    try {
      const seededSize = await storageOf(store);

      log(`${kind}: (c) export of company ${LEAVING}'s ${items.toLocaleString("en")} items`);
      const exported = await runChild(cli("companies", "export", "--company-id", String(LEAVING)), store, { sampleRss: true, discardStdout: true });
      const exportSeconds = (exported.endedAt - exported.startedAt) / 1000;
      const mb = (bytes: number) => bytes / 1_048_576;
      const rss = exported.rss.map((sample) => sample.bytes);
      // From its first page on: before it, the process is still loading its modules.
      const firstPageAt = exported.lines.find((l) => /items so far/.test(l.line))?.at ?? exported.startedAt;
      const streaming = exported.rss.filter((sample) => sample.at >= firstPageAt).map((sample) => sample.bytes);
      const exportFigures = {
        itemsPerSecond: items / exportSeconds,
        seconds: exportSeconds,
        rssMinMb: mb(Math.min(...rss)),
        rssMaxMb: mb(Math.max(...rss)),
        rssGrowthMb: mb(Math.max(...rss) - Math.min(...rss)),
        rssGrowthStreamingMb: streaming.length === 0 ? 0 : mb(Math.max(...streaming) - Math.min(...streaming)),
      };

      await sleep(baselineMs);
      log(`${kind}: (a) erase of company ${LEAVING}`);
      const erased = await runChild(cli("companies", "erase", "--company-id", String(LEAVING), "--confirm", String(LEAVING), "--reason", "bench", "--json"), store);
      const deletingAt = erased.lines.find((l) => /its work is stopped; deleting/.test(l.line))?.at ?? erased.startedAt;
      const erasedItems = (JSON.parse(erased.stdout) as { items: number }).items;
      if (erasedItems !== items) throw new Error(`the erase counted ${erasedItems} items, not ${items}`);
      const eraseBefore = intakeBetween(intake.adds, erased.startedAt - baselineMs, erased.startedAt);
      const eraseDuring = intakeBetween(intake.adds, deletingAt, erased.endedAt);
      const space: StoreFigures["space"] = { seeded: seededSize, afterErase: await storageOf(store), afterVacuum: null };
      if (kind === "sqlite") {
        await runChild(cli("db", "vacuum", "--json"), store);
        space.afterVacuum = await storageOf(store);
      }

      await sleep(baselineMs);
      log(`${kind}: (b) item sweep over company ${EXPIRED}'s ${items.toLocaleString("en")} expired items`);
      const swept = await runChild(["--import", "tsx", join(ROOT, "bench", "lib", "sweep-expired.ts"), "--retention-days", RETENTION_DAYS], store);
      const sweepResult = JSON.parse(swept.stdout) as { items: number; ms: number; passes: number };
      if (sweepResult.items !== items) throw new Error(`the sweep erased ${sweepResult.items} items, not ${items}`);
      const sweepBefore = intakeBetween(intake.adds, swept.startedAt - baselineMs, swept.startedAt);
      const sweepDuring = intakeBetween(intake.adds, swept.startedAt, swept.endedAt);

      const deletingSeconds = (erased.endedAt - deletingAt) / 1000;
      return {
        store: kind,
        description: store.description,
        items,
        seedSeconds,
        export: exportFigures,
        erase: {
          itemsPerSecond: items / deletingSeconds,
          deletingSeconds,
          wholeSeconds: (erased.endedAt - erased.startedAt) / 1000,
          before: eraseBefore,
          during: eraseDuring,
          p99Ratio: eraseDuring.p99 / eraseBefore.p99,
        },
        sweep: {
          itemsPerSecond: sweepResult.items / (sweepResult.ms / 1000),
          seconds: sweepResult.ms / 1000,
          passes: sweepResult.passes,
          before: sweepBefore,
          during: sweepDuring,
          p99Ratio: sweepDuring.p99 / sweepBefore.p99,
        },
        space,
      };
    } finally {
      await intake.stop();
      await server.stop();
    }
  } finally {
    await store.cleanup();
  }
}

const num = (value: number, digits = 0) => value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const sizeText = (size: StorageSize | null) => {
  if (size === null) return "–";
  if (size.kind === "postgres") return `schema ${num(size.schemaBytes / 1_048_576)} MB`;
  return `${num(size.bytes / 1_048_576)} MB, ${num(size.freePages)} free pages, file ${num(size.fileBytes / 1_048_576)} MB`;
};

function report(runs: StoreFigures[], loadStart: number[], loadEnd: number[]): string[] {
  const ms = (value: number) => num(value, 1);
  return [
    `Erasing and exporting, ${num(items)} items a phase, ${clients} clients adding for other companies throughout; ${cpus().length} CPUs, load average ${loadStart.map((l) => l.toFixed(2)).join(" ")} at the start, ${loadEnd.map((l) => l.toFixed(2)).join(" ")} at the end`,
    "",
    "| store | phase | items/s | seconds | intake p99 before | during | ratio | adds/s before | during | errors |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...runs.flatMap((run) => {
      const row = (phase: string, figures: StoreFigures["erase"] | StoreFigures["sweep"], seconds: number) =>
        `| ${run.store} | ${phase} | ${num(figures.itemsPerSecond)} | ${num(seconds, 1)} | ${ms(figures.before.p99)} ms | ${ms(figures.during.p99)} ms | ${num(figures.p99Ratio, 2)} | ${num(figures.before.adds / (baselineMs / 1000))} | ${num(figures.during.adds / seconds)} | ${figures.during.errors} |`;
      return [row("erase (deleting)", run.erase, run.erase.deletingSeconds), row("item sweep", run.sweep, run.sweep.seconds)];
    }),
    "",
    "| store | export items/s | seconds | RSS min | max | max − min | max − min from the first page on |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...runs.map(
      (run) =>
        `| ${run.store} | ${num(run.export.itemsPerSecond)} | ${num(run.export.seconds, 1)} | ${num(run.export.rssMinMb)} MB | ${num(run.export.rssMaxMb)} MB | ${num(run.export.rssGrowthMb, 1)} MB | ${num(run.export.rssGrowthStreamingMb, 1)} MB |`,
    ),
    "",
    "| store | seeded (2 × items) | after erasing half | after db vacuum |",
    "|---|---|---|---|",
    ...runs.map((run) => `| ${run.store} | ${sizeText(run.space.seeded)} | ${sizeText(run.space.afterErase)} | ${sizeText(run.space.afterVacuum)} |`),
    "",
    ...runs.map((run) => `- ${run.store}: ${run.description}; seeded in ${num(run.seedSeconds)} s; the erase took ${num(run.erase.wholeSeconds, 1)} s in all (its wait for the keys' refusal included); the sweep ${run.sweep.passes} passes`),
  ];
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadStart = loadavg();
  log("building the production build");
  await buildProduction();
  const runs: StoreFigures[] = [];
  for (const kind of stores!) runs.push(await measure(kind));
  const lines = report(runs, loadStart, loadavg());
  process.stdout.write(`${lines.join("\n")}\n`);
  const resultsDir = join(ROOT, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const base = `${startedAt.toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}-erasure`;
  const files = { json: join(resultsDir, `${base}.json`), md: join(resultsDir, `${base}.md`) };
  const command = `npm run bench:erasure -- ${process.argv.slice(2).join(" ")}`.trim();
  writeFileSync(files.json, `${JSON.stringify({ startedAt: startedAt.toISOString(), command, loadStart, loadEnd: loadavg(), items, clients, runs }, null, 2)}\n`);
  writeFileSync(files.md, `# Erasure bench ${startedAt.toISOString()}\n\n\`${command}\`\n\n${lines.join("\n")}\n`);
  process.stdout.write(`wrote ${Object.values(files).map((f) => relative(ROOT, f)).join(", ")}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:erasure failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
