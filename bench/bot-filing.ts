/**
 * `npm run bench:bot-filing -- [flags]`: how well the bot uses the Authority's capacity, and how
 * long an integrator waits from add to webhook (SPEC §10).
 *
 * 1. Capacity. A fresh store with N items (default 2,000) of one company, the authority simulator
 *    on loopback answering after a fixed latency (default 200 ms), and one `runBotOnce` pass with
 *    AUTHORITY_MAX_CONCURRENCY=8 (BOT_CONCURRENCY 8, no calls-per-second cap). The capacity is
 *    concurrency ÷ latency calls a second: 8 ÷ 0.2 s = 40. Each item takes two calls (submit,
 *    then the status that decides it), so the report gives the calls a second over the whole
 *    pass and the items filed (submitted) a second while the bot was submitting, both against
 *    that capacity, and the items decided a second.
 * 2. Latency. The service as a process (ROLE=all, BOT_SCHEDULE every second, the same simulator),
 *    a webhook receiver on loopback, and items added over HTTP at a steady rate: the time from
 *    sending the add to receiving its `workitem.succeeded` webhook, p50 and p99.
 *
 * With `--store citus` the capacity pass runs on a Citus cluster of a coordinator and two worker
 * nodes that the bench starts on this machine (scripts/citus-cluster.ts, ports 5460–5462,
 * `citus.shard_count` 8) and removes afterwards; `--companies` spreads the items over that many
 * companies, and so over the shard groups (SPEC §23 compares that with one PostgreSQL).
 *
 *   npm run bench:bot-filing
 *   npm run bench:bot-filing -- --items 500 --latency-items 100 --store postgres
 *   npm run bench:bot-filing -- --store citus --items 480 --companies 12 --concurrency 16 --latency-items 0
 *
 * Nothing is written to bench/results/; the table goes to stdout, progress to stderr.
 */
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { AuthorityAdapter } from "../src/authority/protocol.ts";
import { newWorkerId } from "../src/bot/authority.ts";
import { createAuthorityGate } from "../src/bot/authority-gate.ts";
import { createHttpAuthorityAdapter } from "../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../src/bot/run-once.ts";
import { loadConfig } from "../src/config.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../src/domain/views.ts";
import { forEachConcurrently } from "../src/lib/concurrency.ts";
import { openStore } from "../src/store/open-store.ts";
import { distributeSchema } from "../src/store/postgres/distribution.ts";
import { citusMissing, clusterDown, clusterUp, databaseUrl, type ClusterOptions } from "../scripts/citus-cluster.ts";
import { cliJson, startServer, stopAll, stopAllOnSignals } from "../scripts/lib/processes.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { lengthOf } from "./lib/intervals.ts";
import { login } from "./lib/setup.ts";
import { registrableItem, startSimulator } from "./lib/simulator.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./lib/stores.ts";

const USAGE = `usage: npm run bench:bot-filing -- [flags]
  --store S             sqlite, postgres or citus (default sqlite; citus starts a cluster of
                        its own on ports 5460-5462, for the capacity pass only)
  --items N             items filed in the capacity pass (default 2000)
  --companies N         companies the items are spread over (default 1)
  --latency-ms N        simulator latency per call (default 200)
  --concurrency N       AUTHORITY_MAX_CONCURRENCY (default 8)
  --bot-concurrency N   BOT_CONCURRENCY (default: the service's default)
  --latency-items N     items added in the add-to-webhook part (default 200; 0 skips it)
  --rate N              items added a second in that part (default 10)
  --postgres-url URL    database the fresh schema is made in
                        (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test)
Takes about 2 minutes at the defaults.`;

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

function parseOptions(argv: string[]) {
  const values = benchFlags(argv, USAGE, {
    store: { type: "string", default: "sqlite" },
    items: { type: "string", default: "2000" },
    companies: { type: "string", default: "1" },
    "latency-ms": { type: "string", default: "200" },
    concurrency: { type: "string", default: "8" },
    "bot-concurrency": { type: "string" },
    "latency-items": { type: "string", default: "200" },
    rate: { type: "string", default: "10" },
    "postgres-url": { type: "string", default: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
  });
  const whole = wholeNumber;
  if (values.store !== "sqlite" && values.store !== "postgres" && values.store !== "citus") throw new Error(`--store: sqlite, postgres or citus, got ${JSON.stringify(values.store)}`);
  if (values.store === "citus" && citusMissing()) throw new Error(`--store citus: ${citusMissing()}`);
  if (values.store === "citus" && values["latency-items"] !== "0") throw new Error("--store citus measures the capacity pass only: add --latency-items 0");
  return {
    store: values.store,
    items: whole("items", values.items, 1),
    companies: whole("companies", values.companies, 1),
    latencyMs: whole("latency-ms", values["latency-ms"], 1),
    concurrency: whole("concurrency", values.concurrency, 1),
    botConcurrency: values["bot-concurrency"] === undefined ? undefined : whole("bot-concurrency", values["bot-concurrency"], 1),
    latencyItems: whole("latency-items", values["latency-items"], 0),
    rate: whole("rate", values.rate, 1),
    postgresUrl: values["postgres-url"],
  };
}
type Options = ReturnType<typeof parseOptions>;

type FreshStore = Pick<BenchStore, "databaseUrl" | "cleanup">;

const freshStore = (options: Options, label: string): Promise<FreshStore> =>
  options.store === "citus" ? citusStore() : options.store === "sqlite" ? Promise.resolve(sqliteBenchStore(false)) : postgresBenchStore(options.postgresUrl, false, label);

/** A coordinator and two workers of the bench's own, the schema made and distributed over 8 shard groups. */
async function citusStore(): Promise<FreshStore> {
  const cluster: ClusterOptions = { folder: mkdtempSync(join(tmpdir(), "wia-citus-bench-")), port: 5460, workers: 2 };
  log("citus: starting a coordinator and two workers");
  await clusterUp(cluster);
  const url = databaseUrl(cluster);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query("ALTER DATABASE test SET citus.shard_count = 8");
  await admin.end();
  await (await openStore({ kind: "postgres", url })).close();
  await distributeSchema(url);
  return { databaseUrl: url, cleanup: async () => clusterDown(cluster) };
}

/** The adapter, remembering when each call started and ended. */
function timed(adapter: AuthorityAdapter) {
  const calls = { submit: [] as Array<[number, number]>, status: [] as Array<[number, number]> };
  const time = <T>(kind: keyof typeof calls, work: Promise<T>): Promise<T> => {
    const started = performance.now();
    return work.finally(() => calls[kind].push([started, performance.now()]));
  };
  const wrapped: AuthorityAdapter = {
    // Its name, its follow-up calls of every kind and its close as they are.
    ...adapter,
    submit: (request) => time("submit", adapter.submit(request)),
    status: (applicationNumber) => time("status", adapter.status(applicationNumber)),
  };
  return { adapter: wrapped, calls };
}

async function capacityPass(options: Options) {
  const location = await freshStore(options, "bot_filing");
  const config = loadConfig({
    DATABASE_URL: location.databaseUrl,
    LOG_LEVEL: "warn",
    AUTHORITY_MAX_CONCURRENCY: String(options.concurrency),
    ...(options.botConcurrency ? { BOT_CONCURRENCY: String(options.botConcurrency) } : {}),
    // The throttle this part measures is the concurrency; a calls-a-second cap would bind first.
    AUTHORITY_MAX_RPS: "0",
  });
  const store = await openStore(config.store);
  const sim = await startSimulator(options.latencyMs);
  const http = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 10_000 });
  try {
    const companies = Array.from({ length: options.companies }, (_, index) => index + 1);
    for (const companyId of companies) await store.createCompany({ companyId, name: `Bot filing ${companyId}` });
    log(`capacity: adding ${options.items} items of ${options.companies} companies on ${options.store}`);
    await forEachConcurrently(
      Array.from({ length: options.items }, (_, i) => i),
      32,
      async (i) => {
        const request = registrableItem(`filing-${i}`);
        const outcome = await store.addWorkItem({
          companyId: companies[i % companies.length]!,
          workType: WORK_TYPE_AUTHORITY_RVDM,
          customerReference: String(request.customerReference),
          documentReference: null,
          webhookUrl: null,
          request,
          batchMaxItems: config.batchMaxItems,
        });
        if (outcome.kind !== "created") throw new Error(`seeding: addWorkItem answered ${outcome.kind}`);
      },
    );
    const { adapter, calls } = timed(http);
    const owner = newWorkerId();
    log(`capacity: one bot pass, ${config.botConcurrency} items at once, ${options.concurrency} calls in flight, ${options.latencyMs} ms a call`);
    const started = performance.now();
    const counts = await runBotOnce({ store, gate: createAuthorityGate({ store, adapter, config, owner }), config, owner });
    const passMs = performance.now() - started;
    if (counts.succeeded !== options.items) throw new Error(`the pass decided ${counts.succeeded} of ${options.items} items: ${JSON.stringify(counts)}`);
    const capacity = (options.concurrency * 1000) / options.latencyMs;
    const callsPerSecond = ((calls.submit.length + calls.status.length) * 1000) / passMs;
    const filedPerSecond = (calls.submit.length * 1000) / lengthOf(calls.submit);
    const { maxInFlight } = await sim.totals();
    const all = [...calls.submit, ...calls.status];
    const meanCallMs = all.reduce((sum, [s, e]) => sum + (e - s), 0) / all.length;
    return { passMs, capacity, callsPerSecond, meanCallMs, filedPerSecond, decidedPerSecond: (options.items * 1000) / passMs, submits: calls.submit.length, statuses: calls.status.length, maxInFlight };
  } finally {
    await http.close();
    await sim.close();
    await store.close();
    await location.cleanup();
  }
}

async function addToWebhook(options: Options) {
  const location = await freshStore(options, "bot_filing_latency");
  const sim = await startSimulator(options.latencyMs);
  const received = new Map<number, number>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = performance.now();
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; data: { workItemId: number } };
      if (event.type === "workitem.succeeded" && !received.has(event.data.workItemId)) received.set(event.data.workItemId, at);
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  try {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: location.databaseUrl,
      LOG_LEVEL: "info",
      ROLE: "all",
      BOT_SCHEDULE: "* * * * * *",
      AUTHORITY_URL: sim.url,
      AUTHORITY_MAX_RPS: "0",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      RATE_LIMIT_TENANT_RPS: "0",
    };
    const key = await cliJson<{ apiKey: string; secret: string }>(["keys", "create", "--company-id", "1", "--name", "bench"], env);
    const server = await startServer(env);
    const token = await login(server.baseUrl, key.apiKey, key.secret);
    log(`add to webhook: ${options.latencyItems} items at ${options.rate} a second, bot every second`);
    const sent = new Map<number, number>();
    const interval = 1000 / options.rate;
    const begin = performance.now();
    for (let i = 0; i < options.latencyItems; i++) {
      const wait = begin + i * interval - performance.now();
      if (wait > 0) await sleep(wait);
      const at = performance.now();
      const response = await fetch(`${server.baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ ...registrableItem(`filing-${i}`), webhookUrl: hookUrl }),
      });
      if (response.status !== 200) throw new Error(`add answered ${response.status}: ${await response.text()}`);
      sent.set(((await response.json()) as { workItemId: number }).workItemId, at);
    }
    const deadline = performance.now() + 120_000;
    while (received.size < sent.size && performance.now() < deadline) await sleep(100);
    await server.stop();
    if (received.size < sent.size) throw new Error(`only ${received.size} of ${sent.size} webhooks arrived within 2 minutes`);
    const waits = [...sent].map(([id, at]) => received.get(id)! - at).sort((a, b) => a - b);
    const quantile = (q: number) => waits[Math.min(waits.length - 1, Math.ceil(q * waits.length) - 1)]!;
    return { items: waits.length, p50: quantile(0.5), p99: quantile(0.99), max: waits[waits.length - 1]! };
  } finally {
    await stopAll();
    await new Promise((resolve) => receiver.close(resolve));
    await sim.close();
    await location.cleanup();
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  stopAllOnSignals(2000);
  const capacity = await capacityPass(options);
  const round = (value: number, digits = 1) => value.toFixed(digits);
  const lines = [
    `Bot filing on ${options.store}: ${options.items} items of ${options.companies} companies, simulator ${options.latencyMs} ms a call, ${options.concurrency} calls in flight (capacity ${round(capacity.capacity, 0)} calls/s)`,
    "",
    "| Measure | Value | Of capacity |",
    "|---|---|---|",
    `| One pass, New → Successful | ${round(capacity.passMs / 1000, 2)} s (${capacity.submits} submits, ${capacity.statuses} status requests) | |`,
    `| Mean call, as the bot saw it | ${round(capacity.meanCallMs)} ms | |`,
    `| Calls in flight at most, as the simulator saw them | ${capacity.maxInFlight} | of ${options.concurrency} |`,
    `| Authority calls/s over the pass | ${round(capacity.callsPerSecond)} | ${round((100 * capacity.callsPerSecond) / capacity.capacity)}% |`,
    `| Items filed/s while submitting | ${round(capacity.filedPerSecond)} | ${round((100 * capacity.filedPerSecond) / capacity.capacity)}% |`,
    `| Items decided/s over the pass (two calls each) | ${round(capacity.decidedPerSecond)} | ${round((200 * capacity.decidedPerSecond) / capacity.capacity)}% of ${round(capacity.capacity / 2, 0)} |`,
  ];
  if (options.latencyItems > 0) {
    const latency = await addToWebhook(options);
    lines.push(
      `| Add → webhook, ${latency.items} items at ${options.rate}/s, BOT_SCHEDULE every second | p50 ${round(latency.p50 / 1000, 2)} s, p99 ${round(latency.p99 / 1000, 2)} s, max ${round(latency.max / 1000, 2)} s | |`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench:bot-filing failed: ${error instanceof Error ? error.message : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
