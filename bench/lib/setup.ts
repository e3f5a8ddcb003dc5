/**
 * Getting a server ready to measure: the production build, the server process (pinned, with a
 * fresh data folder), tenants made with the real CLI, their tokens from the real login route,
 * and a first set of items to read back.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cliJson, freePort, launch, runToEnd, startServer as startServerProcess, type StartedProcess } from "../../scripts/lib/processes.ts";
import { workItemBodies, type BenchTenant } from "./routes.ts";
import type { BenchStore } from "./stores.ts";

export const ROOT = join(import.meta.dirname, "..", "..");

/** SIGTERM, then SIGKILL this much later: a server under --cpu-prof writes its profile as it exits. */
const STOP_GRACE_MS = 15_000;

/** A process of the bench that serves HTTP on loopback `port`. */
export type Started = StartedProcess & { readonly port: number };

export async function buildProduction(): Promise<void> {
  await runToEnd("npm", ["run", "--silent", "build"], { env: { ...process.env, npm_config_loglevel: "error" } });
  if (!existsSync(join(ROOT, "dist", "server.js"))) throw new Error("npm run build produced no dist/server.js");
}

/** The environment of the server under test: production build, quiet logs, limits that never bind. */
export function serverEnv(store: BenchStore): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    // HTTP only: the bot's scheduled runs would otherwise compete with intake for the core.
    ROLE: "api",
    DATABASE_URL: store.databaseUrl,
    LOG_LEVEL: "warn",
    // The limiter stays on, at a rate no bench reaches, so its cost is measured but it never answers 429.
    RATE_LIMIT_TENANT_RPS: "1000000",
    RATE_LIMIT_TENANT_BURST: "1000000",
    LOGIN_FAILURES_PER_MINUTE: "1000000",
    TZ: "UTC",
  };
}

/** The production build on a free loopback port; at LOG_LEVEL=warn it is ready when /healthz answers. */
/** `root`: the folder whose dist/ runs, the repository's own unless a side-by-side build's. */
export async function startServer(store: BenchStore, cpus: string | undefined, nodeFlags: string[] = [], root = ROOT, extraEnv: NodeJS.ProcessEnv = {}): Promise<Started> {
  return startServerProcess({ ...serverEnv(store), ...extraEnv }, { launcher: "build", port: await freePort(), readyBy: "healthz", readyTimeoutMs: 30_000, cpus, nodeFlags, stopGraceMs: STOP_GRACE_MS, cwd: root });
}

/** Starts one of bench/servers/*.mjs on a free port; each prints `listening <port>` once it listens. */
export async function startHelperServer(file: string, args: string[], cpus: string | undefined): Promise<Started> {
  const child = launch(process.execPath, [join(ROOT, "bench", "servers", file), "0", ...args], { cpus, stopGraceMs: STOP_GRACE_MS });
  try {
    const port = await child.waitForLine(`${file} to listen`, (line) => /^listening (\d+)$/.exec(line)?.[1], 30_000);
    return Object.assign(child, { port: Number(port) });
  } catch (error) {
    await child.kill();
    throw new Error(`${(error as Error).message}:\n${child.output().trim()}`, { cause: error });
  }
}

export const startCeiling = (cpus: string | undefined) => startHelperServer("ceiling.mjs", [], cpus);

/** Companies 1..n, each with one API key, made through the admin CLI of the production build. */
export async function createTenants(store: BenchStore, count: number, root = ROOT): Promise<Array<{ companyId: number; apiKey: string; secret: string }>> {
  const env = { ...process.env, DATABASE_URL: store.databaseUrl, LOG_LEVEL: "warn" };
  const tenants = [];
  for (let companyId = 1; companyId <= count; companyId++) {
    await cliJson(["companies", "create", "--company-id", String(companyId), "--name", `Bench ${companyId}`], env, { launcher: "build", cwd: root });
    const key = await cliJson<{ apiKey: string; secret: string }>(["keys", "create", "--company-id", String(companyId), "--name", "bench"], env, { launcher: "build", cwd: root });
    tenants.push({ companyId, apiKey: key.apiKey, secret: key.secret });
  }
  return tenants;
}

export async function login(baseUrl: string, apiKey: string, secret: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/Login/Authenticate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey, secret }),
  });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { bearerToken: string }).bearerToken;
}

/** Adds `perTenant` items per company over HTTP and records their ids; returns the 200 count. */
export async function seedItems(baseUrl: string, tenants: BenchTenant[], perTenant: number): Promise<number> {
  let ok = 0;
  await Promise.all(
    tenants.map(async (tenant) => {
      const bodies = workItemBodies(tenant.companyId);
      for (let i = 0; i < perTenant; i++) {
        const response = await fetch(`${baseUrl}/api/AuthorityRvdm/AddWorkItemCreate`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${tenant.token}` },
          body: bodies[i % bodies.length]!.replace("@REF@", `seed-${i}`),
        });
        if (response.status !== 200) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
        ok++;
        tenant.itemIds.push(((await response.json()) as { workItemId: number }).workItemId);
      }
    }),
  );
  return ok;
}
