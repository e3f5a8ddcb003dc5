/**
 * `npm run demo`: the whole integrator flow in one command, for a newcomer right after clone and
 * install. It starts the service on a throwaway SQLite store (or uses `--base-url`), creates a
 * demo company and API key with the admin CLI, and then, through the SDK, authenticates, pings
 * and submits four work items, one of which the authority simulator rejects (a 7-digit chamber
 * of commerce number). It runs the bot, receives the signed webhooks on a local receiver,
 * verifies them, prints each item's outcome, and stops every process it started.
 *
 * Exit codes: 0 done, 1 failed (the reason is printed), 2 usage, 130 interrupted (143 on SIGTERM).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { WorkItemClient, type AuthorityRvdmWorkItemCreate, type WorkItemView } from "../src/client/index.ts";
import { answersHealthz, cliJson, freePort, runCli, startServer, stopAll, stopAllOnSignals } from "./lib/processes.ts";
import { startReceiver, type Receiver } from "./demo/receiver.ts";
import { bar, bold, createProgress, detail, outcomeTable, step } from "./demo/report.ts";

const TERMINAL = new Set(["Successful", "Failed", "Cancelled"]);
/** A bot run scheduled here never fires during a demo: the demo runs the bot itself. */
const NEVER = "0 0 1 1 *";

class DemoError extends Error {}

const USAGE = `usage: npm run demo [-- --base-url URL] [--timeout SECONDS]

  --base-url URL     use a running service instead of starting one; the admin CLI then works on
                     your DATABASE_URL, which must be that service's store, and the service must
                     run with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to reach the local receiver
  --timeout SECONDS  how long to wait for every outcome and webhook (default 90)`;

function workItems(webhookUrl: string): AuthorityRvdmWorkItemCreate[] {
  const exportDate = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const item = (customerReference: string, sender: string, product: string, country: string): AuthorityRvdmWorkItemCreate => ({
    customerReference,
    productName: { sendValue: product },
    destinationCountry: { sendValue: country },
    exportDate,
    senderChamberOfCommerceNo: { sendValue: sender },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
    plannedLoad: 31.5,
    webhookUrl,
  });
  return [
    item("DEMO-1", "12345678", "RUNDVEEMEST", "DE"),
    item("DEMO-2", "23456789", "VARKENSMEST", "BE"),
    item("DEMO-3", "1234567", "RUNDVEEMEST", "DE"), // 7 digits: the simulator rejects it
    item("DEMO-4", "34567890", "PLUIMVEEMEST", "FR"),
  ];
}

interface BotSummary {
  batches: number;
  succeeded: number;
  failed: number;
  retried: number;
}

/** Children get this long to stop on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5000;

/** `bot run-once` as its own process; a failure is reported plainly instead of waited for. */
async function runBot(env: Record<string, string | undefined>): Promise<BotSummary> {
  const outcome = await runCli(["bot", "run-once", "--json"], env, { timeoutMs: 120_000 });
  if (outcome.code !== 0) throw new DemoError(`bot run-once failed (exit ${outcome.code}): ${outcome.stderr.trim() || outcome.stdout.trim()}`);
  return outcome.json<BotSummary>();
}

async function main(): Promise<number> {
  let flags;
  try {
    flags = parseArgs({ options: { "base-url": { type: "string" }, timeout: { type: "string" }, help: { type: "boolean" } }, strict: true }).values;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const timeoutSeconds = Number(flags.timeout ?? 90);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    process.stderr.write(`--timeout must be a positive number of seconds\n\n${USAGE}\n`);
    return 2;
  }

  let tempDir: string | undefined;
  let receiver: Receiver | undefined;
  try {
    process.stdout.write(`${bold("Work-Item API demo")}\n\n`);
    let env: Record<string, string | undefined>;
    let baseUrl: string;
    if (flags["base-url"]) {
      baseUrl = flags["base-url"].replace(/\/+$/, "");
      step(`Using the service at ${baseUrl}`);
      if (!(await answersHealthz(baseUrl))) throw new DemoError(`${baseUrl}/healthz does not answer`);
      env = { ...process.env };
      detail(`admin CLI on DATABASE_URL=${env.DATABASE_URL ?? "sqlite:./data/work-item-api.db (default)"}`);
    } else {
      tempDir = mkdtempSync(join(tmpdir(), "work-item-api-demo-"));
      env = {
        ...process.env,
        DATABASE_URL: `sqlite:${join(tempDir, "data", "work-item-api.db")}`,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
        BOT_SCHEDULE: NEVER,
        AUTHORITY_URL: undefined,
        LOG_LEVEL: "warn",
      };
      step("Starting the service on a temp SQLite store");
      // LOG_LEVEL=warn keeps the service quiet, so it is ready when /healthz answers, not at a log line.
      const service = await startServer(env, { port: await freePort(), readyBy: "healthz" });
      baseUrl = service.baseUrl;
      detail(`${baseUrl} (pid ${service.pid}), store ${env.DATABASE_URL}`);
    }

    step("Creating a demo company and API key with the admin CLI");
    const company = await cliJson<{ companyId: number; name: string }>(["companies", "create", "--name", `Demo ${new Date().toISOString()}`], env);
    const key = await cliJson<{ apiKey: string; secret: string }>(["keys", "create", "--company-id", String(company.companyId), "--name", "demo"], env);
    const hook = await cliJson<{ secret: string }>(["webhooks", "secret", "--company-id", String(company.companyId)], env);
    detail(`company ${company.companyId}, API key ${key.apiKey}, secret and webhook secret kept in memory`);

    receiver = await startReceiver(() => hook.secret);
    detail(`webhook receiver at ${receiver.url}`);

    step("Authenticating and pinging with the SDK");
    const client = new WorkItemClient({ baseUrl, apiKey: key.apiKey, secret: key.secret });
    const token = await client.authenticate();
    detail(`token valid until ${token.expires}`);
    detail(await client.pingAuthorityRvdm());

    step("Submitting four work items (DEMO-3 has a 7-digit chamber of commerce number)");
    const ids: number[] = [];
    for (const body of workItems(receiver.url)) {
      const added = await client.addWorkItemCreate(body);
      ids.push(added.workItemId);
      detail(`${body.customerReference} -> work item ${added.workItemId} in batch ${added.workBatchId} (Idempotency-Key ${added.idempotencyKey})`);
    }

    step("Running the bot (npm run -s cli -- bot run-once)");
    const summary = await runBot(env);
    detail(`${summary.batches} batch(es): ${summary.succeeded} succeeded, ${summary.failed} failed, ${summary.retried} to retry`);

    step("Waiting for the results and the signed webhooks");
    const items = await waitForOutcomes(client, ids, receiver, env, timeoutSeconds);

    process.stdout.write(`\n${outcomeTable(items, receiver.byItem)}\n\n`);
    if (receiver.refused.length > 0) throw new DemoError(`webhooks that failed verification: ${receiver.refused.join("; ")}`);
    const succeeded = items.filter((item) => item.status === "Successful").length;
    const failed = items.filter((item) => item.status === "Failed").length;
    step(`Done: ${succeeded} successful, ${failed} failed, ${receiver.byItem.size} webhooks received and verified`);
    return 0;
  } catch (error) {
    process.stdout.write("\n");
    process.stderr.write(`demo failed: ${error instanceof DemoError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    await receiver?.close();
    const stopped = await stopAll(STOP_GRACE_MS);
    if (stopped.length > 0) step(`Stopped the processes the demo started (pid ${stopped.join(", ")})`);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}

/** Polls the items until each is terminal and has its webhook; runs the bot again for retries. */
async function waitForOutcomes(client: WorkItemClient, ids: number[], receiver: Receiver, env: Record<string, string | undefined>, timeoutSeconds: number): Promise<WorkItemView[]> {
  const started = Date.now();
  const progress = createProgress();
  let lastBotRun = Date.now();
  try {
    for (;;) {
      const items = await Promise.all(ids.map((id) => client.getWorkItem(id)));
      const done = items.filter((item) => TERMINAL.has(item.status)).length;
      const hooks = items.filter((item) => receiver.byItem.has(item.workItemId)).length;
      const seconds = Math.round((Date.now() - started) / 1000);
      progress.update(`${bar(done + hooks, ids.length * 2)} ${done}/${ids.length} items done, ${hooks}/${ids.length} webhooks received, ${seconds} s`);
      if (done === ids.length && hooks === ids.length) return items;
      if (Date.now() - started > timeoutSeconds * 1000) {
        const open = items.filter((item) => !TERMINAL.has(item.status) || !receiver.byItem.has(item.workItemId));
        throw new DemoError(
          `gave up after ${timeoutSeconds} s: ${open.map((item) => `${item.customerReference} is ${item.status}${receiver.byItem.has(item.workItemId) ? "" : ", no webhook yet"}`).join("; ")}`,
        );
      }
      // Items the authority could not take yet stay New and wait for a later run.
      if (done < ids.length && Date.now() - lastBotRun > 5000) {
        await runBot(env);
        lastBotRun = Date.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    progress.done();
  }
}

let interrupted = false;
stopAllOnSignals(STOP_GRACE_MS, () => {
  interrupted = true;
  process.stderr.write("\ninterrupted; stopping the demo's processes\n");
});

main().then((code) => {
  process.exitCode = interrupted ? 130 : code;
});
