/**
 * `npm run bench:bulk -- [flags]`: how fast AddWorkItemCreateBulk stores items on SQLite, over
 * real HTTP, against what plain better-sqlite3 can insert into the same tables on the same disk.
 *
 * One run: `npm run build`; the production server (`node dist/server.js`, ROLE=api, the rate
 * limiter on but far above the load) on a fresh SQLite file, pinned to core 0; two companies
 * made with the real CLI and logged in through the real route. Then, in alternating slices
 * (so that whatever else the machine does falls on both alike):
 *
 * - **raw**: bench/lib/raw-sqlite-insert.ts in its own process, pinned to the server's core (the
 *   server idles meanwhile): the intake's INSERT statement, 100 rows per commit, WAL with
 *   synchronous=FULL, on a second file the service's migrations made, for `--seconds`;
 * - **bulk**: `--connections` loops in this process (pinned to the other cores) each POSTing
 *   bodies of `--items` realistic items (the three shapes of the main bench, PascalCase and
 *   numbers-in-strings included, every item distinct) for `--seconds`; items/s counts the items
 *   answered as stored.
 *
 * Reported per round and as medians: items/s of each, the ratio bulk / raw (target ≥ 0.5),
 * request p50/p99. Checked at the end: the server's file holds exactly the items answered as
 * stored, and no request failed. Nothing is written to bench/results/; the table goes to
 * stdout, progress to stderr.
 *
 *   npm run bench:bulk                          5 rounds of 4 s each side, 4 connections, 1,000 items per body
 *   npm run bench:bulk -- --rounds 5 --seconds 8
 *   npm run bench:bulk -- --help
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { launch } from "../scripts/lib/processes.ts";
import { choosePinning } from "./lib/processes.ts";
import { workItemBodies } from "./lib/routes.ts";
import { buildProduction, createTenants, login, ROOT, startServer } from "./lib/setup.ts";
import { sqliteBenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:bulk -- [flags]
  --rounds N        alternating raw/bulk slices; medians are reported (default 5)
  --seconds N       length of each slice (default 4)
  --connections N   bulk requests in flight at once (default 4)
  --items N         items per bulk body, 1–1000 (default 1000)
  --keep            keep the temp data folder
Takes about (2 × rounds × seconds) + 30 s.`;

const TARGET_RATIO = 0.5;
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

interface Options {
  rounds: number;
  seconds: number;
  connections: number;
  items: number;
  keep: boolean;
}

interface BulkSlice {
  itemsPerSecond: number;
  requests: number;
  items: number;
  failures: string[];
  latenciesMs: number[];
}

interface RawSlice {
  rowsPerSecond: number;
  rows: number;
  commits: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rounds: { type: "string", default: "5" },
      seconds: { type: "string", default: "4" },
      connections: { type: "string", default: "4" },
      items: { type: "string", default: "1000" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const whole = (name: string, text: string, max = Number.MAX_SAFE_INTEGER) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`--${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
    return value;
  };
  return {
    rounds: whole("rounds", values.rounds),
    seconds: whole("seconds", values.seconds),
    connections: whole("connections", values.connections),
    items: whole("items", values.items, 1000),
    keep: values.keep,
  };
}

/** Bodies of `items` distinct items each, cycling through the main bench's three shapes. */
function bulkBodies(companyId: number, items: number, count: number): string[] {
  const shapes = workItemBodies(companyId);
  return Array.from({ length: count }, (_, body) => {
    const list = Array.from({ length: items }, (_, i) => shapes[i % shapes.length]!.replace("@REF@", `B${body}-${i}`));
    return `{"items":[${list.join(",")}]}`;
  });
}

async function bulkSlice(baseUrl: string, clients: Array<{ token: string; bodies: string[] }>, options: Options, round: number): Promise<BulkSlice> {
  const failures: string[] = [];
  const latenciesMs: number[] = [];
  let items = 0;
  let requests = 0;
  const started = performance.now();
  const until = started + options.seconds * 1000;
  await Promise.all(
    Array.from({ length: options.connections }, async (_, connection) => {
      const client = clients[connection % clients.length]!;
      for (let n = 0; performance.now() < until; n++) {
        const body = client.bodies[(round * 7 + connection + n * options.connections) % client.bodies.length]!;
        const sent = performance.now();
        const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreateBulk`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${client.token}` },
          body,
        });
        const text = await response.text();
        latenciesMs.push(performance.now() - sent);
        requests++;
        if (response.status !== 200) {
          failures.push(`${response.status} ${text.slice(0, 200)}`);
          continue;
        }
        const { results } = JSON.parse(text) as { results: Array<{ workItemId?: number }> };
        const stored = results.filter((result) => result.workItemId !== undefined).length;
        if (stored !== options.items) failures.push(`200 storing ${stored} of ${options.items} items`);
        items += stored;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { itemsPerSecond: items / elapsed, requests, items, failures, latenciesMs };
}

async function rawSlice(path: string, seconds: number, cpus: string | undefined): Promise<RawSlice> {
  const child = launch(process.execPath, ["--import", "tsx", join(ROOT, "bench", "lib", "raw-sqlite-insert.ts"), path, String(seconds), "100"], { cpus });
  const code = await child.exited;
  const line = child.lines.find((each) => each.startsWith("{"));
  if (code !== 0 || !line) throw new Error(`raw insert exited with ${code}:\n${child.output()}`);
  return JSON.parse(line) as RawSlice;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? NaN;
const int = (n: number) => Math.round(n).toLocaleString("en-US");

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const pinning = choosePinning();
  // This process is the load generator: keep it off the server's core.
  if (pinning) spawnSync("taskset", ["-a", "-p", "-c", pinning.load, String(process.pid)], { stdio: "ignore" });
  const loadStart = loadavg();
  log("building (npm run build)");
  await buildProduction();
  const store = sqliteBenchStore(options.keep);
  const rawPath = join(store.dataDir, "raw-baseline.db");
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(store, pinning?.server);
    const baseUrl = `http://127.0.0.1:${server.port}`;
    const tenants = await createTenants(store, 2);
    const bodiesPerClient = Math.max(4, options.rounds * 2);
    const clients = await Promise.all(
      tenants.map(async (tenant) => ({ token: await login(baseUrl, tenant.apiKey, tenant.secret), bodies: bulkBodies(tenant.companyId, options.items, bodiesPerClient) })),
    );
    log(`bodies of ${options.items} items: ${int(Buffer.byteLength(clients[0]!.bodies[0]!) / 1024)} KiB each`);

    // Warm-up: the server's JIT and the writer's first pages, then the raw process's.
    await bulkSlice(baseUrl, clients, { ...options, seconds: 1 }, 99);
    const warmed = await store.countItems();
    await rawSlice(rawPath, 1, pinning?.server);

    const rounds: Array<{ raw: RawSlice; bulk: BulkSlice }> = [];
    let answeredStored = 0;
    for (let round = 0; round < options.rounds; round++) {
      const raw = await rawSlice(rawPath, options.seconds, pinning?.server);
      const bulk = await bulkSlice(baseUrl, clients, options, round);
      answeredStored += bulk.items;
      rounds.push({ raw, bulk });
      log(`round ${round + 1}: raw ${int(raw.rowsPerSecond)} rows/s, bulk ${int(bulk.itemsPerSecond)} items/s (${(bulk.itemsPerSecond / raw.rowsPerSecond).toFixed(2)})`);
    }
    const storedAtEnd = await store.countItems();
    const failures = rounds.flatMap((r) => r.bulk.failures);
    const latencies = rounds.flatMap((r) => r.bulk.latenciesMs);
    const rawMedian = median(rounds.map((r) => r.raw.rowsPerSecond));
    const bulkMedian = median(rounds.map((r) => r.bulk.itemsPerSecond));
    const ratio = median(rounds.map((r) => r.bulk.itemsPerSecond / r.raw.rowsPerSecond));

    const lines = [
      `AddWorkItemCreateBulk on SQLite over HTTP vs raw better-sqlite3 (100 rows per commit, WAL, synchronous=FULL)`,
      `${options.rounds} rounds × ${options.seconds} s each side, ${options.connections} connections, ${options.items} items per body; ${pinning ? `server and raw on core ${pinning.server}, load on ${pinning.load}` : "unpinned"}`,
      "",
      "round  raw rows/s  bulk items/s  bulk/raw  bulk requests",
      ...rounds.map(
        (r, i) =>
          `${String(i + 1).padStart(5)}  ${int(r.raw.rowsPerSecond).padStart(10)}  ${int(r.bulk.itemsPerSecond).padStart(12)}  ${(r.bulk.itemsPerSecond / r.raw.rowsPerSecond).toFixed(2).padStart(8)}  ${String(r.bulk.requests).padStart(13)}`,
      ),
      `${"median".padStart(5)}  ${int(rawMedian).padStart(10)}  ${int(bulkMedian).padStart(12)}  ${ratio.toFixed(2).padStart(8)}`,
      "",
      `bulk request latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (${latencies.length} requests)`,
      `${failures.length === 0 ? "PASS" : "FAIL"}  every bulk request answered 200 with every item stored${failures.length ? `: ${failures.length} did not, e.g. ${failures[0]}` : ""}`,
      `${storedAtEnd - warmed === answeredStored ? "PASS" : "FAIL"}  stored items: ${int(storedAtEnd - warmed)} = ${int(answeredStored)} answered as stored`,
      `${ratio >= TARGET_RATIO ? "met " : "MISS"}  bulk items/s vs raw inserts: ${ratio.toFixed(2)} (goal ≥ ${TARGET_RATIO})`,
      `load average ${loadStart.map((n) => n.toFixed(2)).join(" ")} at start, ${loadavg().map((n) => n.toFixed(2)).join(" ")} at the end`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (failures.length > 0 || storedAtEnd - warmed !== answeredStored) process.exitCode = 1;
  } finally {
    await server?.stop();
    await store.cleanup();
  }
}

await main();
