/**
 * Real processes for tests, through the one launcher (scripts/lib/processes.ts): the server, the
 * admin CLI and any other entry file of the package (the authority simulator, the demo). What
 * this file adds is the tests' environment: ours, minus settings a test must choose on purpose,
 * at LOG_LEVEL info so the server's started line appears. `stopAll()` in an `after` hook
 * SIGKILLs whatever a test left running.
 */
import * as launcher from "../../scripts/lib/processes.ts";
import type { Env, Launcher, ServerOptions } from "../../scripts/lib/processes.ts";
import { HANG_TIMEOUT_MS } from "./waiting.ts";
export { freePort, groupGone, parseLine, REPO_ROOT, stopAll } from "../../scripts/lib/processes.ts";
export type { CliResult, Env, Launcher, ServerProcess, StartedProcess, Stopped } from "../../scripts/lib/processes.ts";

/** The environment every child gets: ours, minus settings a test must choose on purpose. */
function childEnv(env: Env): Env {
  const merged: Env = { ...process.env, LOG_LEVEL: "info", NO_UPDATE_NOTIFIER: "1", npm_config_update_notifier: "false" };
  for (const name of ["JWT_SECRET", "DATABASE_URL", "DATA_ENCRYPTION_KEY", "ROLE", "PORT", "HOST", "BATCH_MAX_ITEMS", "TEST_CONCURRENCY"]) delete merged[name];
  return { ...merged, ...env };
}

/**
 * Starts the server on loopback and resolves at its "work-item-api started" log line (default),
 * however long it takes to get there short of a hang.
 */
export const startServer = (env: Env, options: ServerOptions = {}) => launcher.startServer(childEnv(env), { readyTimeoutMs: HANG_TIMEOUT_MS, ...options });

/** Starts the admin CLI; the caller may kill it before it ends. */
export const startCli = (args: string[], env: Env = {}, how: Launcher = "current") => launcher.startCli(args, childEnv(env), how);

/** Starts another entry file of the package (e.g. src/authority-sim/main.ts) directly. */
export const startScript = (entry: string, args: string[], env: Env = {}) => launcher.startScript(entry, args, childEnv(env));

/** Runs the admin CLI to its end (however long it takes, unless `timeoutMs` says otherwise). */
export const runCli = (args: string[], env: Env = {}, options: { launcher?: Launcher; timeoutMs?: number } = {}) => launcher.runCli(args, childEnv(env), options);

export interface CliKey {
  keyId: string;
  companyId: number;
  apiKey: string;
  secret: string;
}

/** A bearer token for the key, from a running server's Authenticate; throws on any other answer. */
export async function bearerTokenFrom(baseUrl: string, key: { apiKey: string; secret: string }): Promise<string> {
  const response = await fetch(`${baseUrl}/api/Login/Authenticate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey: key.apiKey, secret: key.secret }),
  });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { bearerToken: string }).bearerToken;
}

/** `keys create --json` through the real CLI. */
export const createKeyWithCli = (databaseUrl: string, companyId: number): Promise<CliKey> =>
  launcher.cliJson<CliKey>(["keys", "create", "--company-id", String(companyId)], childEnv({ DATABASE_URL: databaseUrl }));
