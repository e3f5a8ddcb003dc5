/**
 * `npm run bench:backup -- [flags]`: intake while `db backup` copies the embedded store (SPEC §18).
 *
 * A fresh SQLite store with `--items` items (bulk SQL, as `npm run bench -- --growth` preloads),
 * the production build serving it (ROLE=api), and `--clients` clients adding items over HTTP one
 * after another for `--seconds`. A third of the way in, `db backup` copies the store from its own
 * process. Adds/s and latency are reported before, during and after the copy, with the copy's
 * time and size. Every add answered before the copy began must be in it; the run fails otherwise.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runCli } from "../scripts/lib/processes.ts";
import { benchFlags, wholeNumber } from "./lib/args.ts";
import { buildProduction, createTenants, login, ROOT, startServer } from "./lib/setup.ts";
import { sqliteBenchStore } from "./lib/stores.ts";
import { UNIQUE_MARKER, workItemBodies } from "./lib/routes.ts";

const USAGE = `usage: npm run bench:backup -- [flags]
  --items N      items in the store before the load (default 1000000)
  --clients N    concurrent clients adding (default 8)
  --seconds N    how long they add (default 30)
  --keep         keep the temp store and the copy`;

const values = benchFlags(process.argv.slice(2), USAGE, {
  items: { type: "string", default: "1000000" },
  clients: { type: "string", default: "8" },
  seconds: { type: "string", default: "30" },
  keep: { type: "boolean", default: false },
});
const items = wholeNumber("items", values.items, 0);
const clients = wholeNumber("clients", values.clients);
const seconds = wholeNumber("seconds", values.seconds, 3);
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

interface Sample {
  at: number;
  ms: number;
  ok: boolean;
  workItemId?: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

async function main(): Promise<number> {
  log("building the production build");
  await buildProduction();
  const store = sqliteBenchStore(values.keep);
  const folder = mkdtempSync(join(tmpdir(), "wia-bench-backup-"));
  try {
    const tenants = await createTenants(store, 10);
    log(`preloading ${items.toLocaleString("en")} items with bulk SQL`);
    await store.preload(items, tenants.map((t) => t.companyId), 1000, (done) => {
      if (process.stderr.isTTY) process.stderr.write(`\r  preloaded ${done.toLocaleString("en")}`);
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    const server = await startServer(store, undefined);
    const baseUrl = `http://127.0.0.1:${server.port}`;
    const tokens = await Promise.all(tenants.map((t) => login(baseUrl, t.apiKey, t.secret)));
    const bodies = tenants.map((t) => workItemBodies(t.companyId)[1]!);
    const samples: Sample[] = [];
    const started = performance.now();
    const endAt = started + seconds * 1000;
    let sequence = 0;
    const client = async (index: number) => {
      while (performance.now() < endAt) {
        const tenant = (index + sequence) % tenants.length;
        const body = bodies[tenant]!.replace(UNIQUE_MARKER, `backup-${sequence++}`);
        const at = performance.now();
        const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
          method: "POST",
          headers: { authorization: `Bearer ${tokens[tenant]}`, "content-type": "application/json" },
          body,
        });
        const answer = response.ok ? ((await response.json()) as { workItemId: number }) : (await response.arrayBuffer(), undefined);
        samples.push({ at: at - started, ms: performance.now() - at, ok: response.ok, ...(answer ? { workItemId: answer.workItemId } : {}) });
      }
    };
    const load = Promise.all(Array.from({ length: clients }, (_, index) => client(index)));
    await new Promise((resolve) => setTimeout(resolve, (seconds * 1000) / 3));
    const file = join(folder, "copy.db");
    const backupStart = performance.now() - started;
    const answeredBefore = samples.filter((s) => s.ok && s.at + s.ms < backupStart).map((s) => s.workItemId!);
    log(`db backup of ${(await store.countItems()).toLocaleString("en")} items, ${answeredBefore.length} answered in this run so far`);
    const backup = await runCli(["db", "backup", file, "--json"], { ...process.env, DATABASE_URL: store.databaseUrl, LOG_LEVEL: "warn" }, { launcher: "build", cwd: ROOT });
    const backupEnd = performance.now() - started;
    if (backup.code !== 0) throw new Error(`db backup failed: ${backup.stderr}`);
    const copy = backup.json<{ bytes: number; workItems: number }>();
    await load;
    await server.stop();

    const inCopy = new Database(file, { readonly: true });
    const has = inCopy.prepare("SELECT 1 FROM work_items WHERE work_item_id = ?");
    const missing = answeredBefore.filter((id) => !has.get(id)).length;
    inCopy.close();

    const phase = (name: string, from: number, to: number) => {
      const inPhase = samples.filter((s) => s.at >= from && s.at < to);
      const ms = inPhase.map((s) => s.ms).sort((a, b) => a - b);
      const errors = inPhase.filter((s) => !s.ok).length;
      return `| ${name} | ${((to - from) / 1000).toFixed(1)} s | ${(inPhase.filter((s) => s.ok).length / ((to - from) / 1000)).toFixed(0)} | ${quantile(ms, 0.5).toFixed(1)} ms | ${quantile(ms, 0.99).toFixed(1)} ms | ${quantile(ms, 1).toFixed(1)} ms | ${errors} |`;
    };
    process.stdout.write(
      [
        `Intake during db backup: ${items.toLocaleString("en")} items preloaded, ${clients} clients adding for ${seconds} s (SQLite, production build, ROLE=api)`,
        "",
        "| phase | length | adds/s | p50 | p99 | max | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
        phase("before the backup", 0, backupStart),
        phase("during the backup", backupStart, backupEnd),
        phase("after the backup", backupEnd, seconds * 1000),
        "",
        `The copy: ${copy.workItems.toLocaleString("en")} items, ${(copy.bytes / 1e6).toFixed(0)} MB, made and checked in ${((backupEnd - backupStart) / 1000).toFixed(1)} s (the CLI's start included); ${missing} of the ${answeredBefore.length} adds answered before it began are missing from it.`,
        "",
      ].join("\n"),
    );
    return missing === 0 ? 0 : 1;
  } finally {
    if (!values.keep) rmSync(folder, { recursive: true, force: true });
    await store.cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench:backup failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
