/** One bench session: a fresh store, the service started on it, its companies logged in, and the ledger of what intake acknowledged. */
import type { Measurement, Check } from "./model.ts";
import type { BenchOptions } from "./options.ts";
import type { BenchTenant } from "./routes.ts";
import { createTenants, login, ROOT, seedItems, startServer, type Started } from "./setup.ts";
import { postgresBenchStore, sqliteBenchStore, type BenchStore } from "./stores.ts";

const SEED_PER_COMPANY = 100;
const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

export /** Accounts for every 200 of an intake route, so the stored rows can be checked afterwards. */
class IntakeLedger {
  seeded = 0;
  warmup = 0;
  timed = 0;
  /** Requests possibly committed but never answered (autocannon hangs up on them). */
  uncertain = 0;
  record(m: Measurement, connections: number) {
    for (const [part, result] of [["warmup", m.warmup], ["timed", m.load]] as const) {
      if (!result) continue;
      this[part] += result.ok200 ?? 0;
      this.uncertain += result.unanswered ?? connections * result.runs;
    }
  }
  get answered() {
    return this.seeded + this.warmup + this.timed;
  }
  check(name: string, stored: number): Check {
    const ok = this.uncertain === 0 ? stored === this.answered : stored >= this.answered && stored <= this.answered + this.uncertain;
    const parts = `${this.seeded.toLocaleString("en-US")} seeded or preloaded + ${this.warmup.toLocaleString("en-US")} warm-up + ${this.timed.toLocaleString("en-US")} timed 200 answers`;
    const detail =
      this.uncertain === 0
        ? `${stored.toLocaleString("en-US")} items stored, ${this.answered.toLocaleString("en-US")} acknowledged (${parts}); no request was left unanswered`
        : `${stored.toLocaleString("en-US")} items stored, ${this.answered.toLocaleString("en-US")} acknowledged (${parts}); up to ${this.uncertain} more may have been committed after the load generator hung up`;
    return { name, ok, detail };
  }
}

export interface Session {
  store: BenchStore;
  server: Started;
  tenants: BenchTenant[];
  ledger: IntakeLedger;
}

export async function openSession(options: BenchOptions, label: string, serverCpus: string | undefined, root = ROOT, extraEnv: NodeJS.ProcessEnv = {}): Promise<Session> {
  const store = options.store === "sqlite" ? sqliteBenchStore(options.keep) : await postgresBenchStore(options.postgresUrl, options.keep, label);
  log(`${label}: ${store.description}; creating ${options.companies} companies and keys with the CLI`);
  let created;
  try {
    created = await createTenants(store, options.companies, root);
  } catch (error) {
    await store.cleanup();
    if (options.store === "postgres") {
      throw new Error(`the PostgreSQL store is missing or does not work yet (DATABASE_URL=postgres://…): ${(error as Error).message.split("\n").slice(-1)[0]}`);
    }
    throw error;
  }
  const server = await startServer(store, serverCpus, [], root, extraEnv);
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const tenants: BenchTenant[] = [];
  for (const t of created) tenants.push({ ...t, token: await login(baseUrl, t.apiKey, t.secret), itemIds: [] });
  const ledger = new IntakeLedger();
  ledger.seeded = await seedItems(baseUrl, tenants, SEED_PER_COMPANY);
  log(`${label}: server pid ${server.pid} on port ${server.port}; ${ledger.seeded} items seeded over HTTP`);
  return { store, server, tenants, ledger };
}
