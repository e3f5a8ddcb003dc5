/**
 * `npm run bench:group-sizes -- [--duration 10] [--connections 50]`: how many items each SQLite
 * group commit carries under load. Runs the app in this process (so the intake writer's counters
 * can be read), drives AddWorkItemCreate with the bench's load generator, and prints the
 * distribution of group sizes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createKey } from "../src/admin/admin.ts";
import { buildApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { openSqliteStore } from "../src/store/sqlite/sqlite-store.ts";
import { runLoad } from "./lib/load.ts";
import { hasCommand } from "../scripts/lib/processes.ts";
import { choosePinning } from "./lib/processes.ts";
import { templatesFor, type BenchTenant } from "./lib/routes.ts";
import { login } from "./lib/setup.ts";

const { values } = parseArgs({ options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "50" } } });
const dir = mkdtempSync(join(tmpdir(), "wia-groups-"));
const path = join(dir, "data", "work-item-api.db");
const config = loadConfig({ DATABASE_URL: `sqlite:${path}`, LOG_LEVEL: "warn", RATE_LIMIT_TENANT_RPS: "0" });
const store = openSqliteStore(path);
const app = await buildApp(config, { store });
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
const baseUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
const tenants: BenchTenant[] = [];
for (let companyId = 1; companyId <= 10; companyId++) {
  const key = await createKey(store, { companyId });
  tenants.push({ companyId, apiKey: key.apiKey, secret: key.secret, token: await login(baseUrl, key.apiKey, key.secret), itemIds: [] });
}
const pinning = choosePinning();
const load = await runLoad(hasCommand("wrk") ? "wrk" : "autocannon", {
  baseUrl,
  requests: templatesFor("AddWorkItemCreate", tenants),
  connections: Number(values.connections),
  durationSeconds: Number(values.duration),
  countAnswers: true,
  cpus: pinning?.load,
});
const { groups, items, largest, sizes } = store.intake.stats;
process.stdout.write(
  `${Math.round(load.requestsPerSecond)} req/s, p99 ${load.latencyMs.p99.toFixed(2)} ms; ${groups} group commits for ${items} items: mean ${(items / groups).toFixed(1)} per commit, largest ${largest}\n`,
);
const buckets: Array<[string, number, number]> = [
  ["1", 1, 1],
  ["2-4", 2, 4],
  ["5-9", 5, 9],
  ["10-19", 10, 19],
  ["20-49", 20, 49],
  ["50+", 50, sizes.length - 1],
];
for (const [name, from, to] of buckets) {
  const count = sizes.slice(from, to + 1).reduce((a, b) => a + b, 0);
  const itemCount = sizes.slice(from, to + 1).reduce((a, b, i) => a + b * (from + i), 0);
  process.stdout.write(`  groups of ${name.padEnd(5)}: ${String(count).padStart(7)} commits, ${((itemCount / items) * 100).toFixed(1).padStart(5)}% of items\n`);
}
const quantile = (q: number) => {
  const target = q * store.intake.stats.commitMs.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (const [ms, count] of store.intake.stats.commitMs.entries()) if ((seen += count) >= target) return ms + 1;
  return Infinity;
};
process.stdout.write(`  group transaction (statements + commit + fsync): p50 < ${quantile(0.5)} ms, p99 < ${quantile(0.99)} ms\n`);
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
