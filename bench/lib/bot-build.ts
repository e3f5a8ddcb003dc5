/**
 * A build of the service whose real bot a bench drives (bench:deadlines): this checkout, another
 * checkout, or a git revision of this repository. Its modules are imported from its own `src/`,
 * so each build runs its own bot, gate, adapter, config and store (with its own migrations).
 *
 * What the bench uses of a build, and what a later build must keep:
 * - src/config.ts           `loadConfig(env)` → config with `store`, `batchMaxItems`, `authorityTimeoutMs`
 * - src/store/open-store.ts `openStore(config.store)` → store with `createCompany`, `addWorkItems`
 *                           (items carry `deadlineAt`), `listWorkItems` (views carry `authority.submittedAt`), `close`
 * - src/bot/http-authority-adapter.ts `createHttpAuthorityAdapter({baseUrl, timeoutMs})`
 * - src/bot/authority-gate.ts `createAuthorityGate({store, adapter, config, owner})`
 * - src/bot/run-once.ts     `runBotOnce({store, gate, config, owner, signal})`
 *
 * A folder with its own node_modules is imported in place. A folder without them, and a git
 * revision, are copied (src/ and package.json) into a temporary folder that links this
 * checkout's node_modules, so they must need no package this checkout lacks.
 */
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AuthorityAdapter } from "../../src/authority/protocol.ts";
import type { AddWorkItemsOutcome, ListWorkItemsQuery, NewWorkItems } from "../../src/store/store.ts";
import type { WorkItemView } from "../../src/domain/views.ts";
import { runToEnd } from "../../scripts/lib/processes.ts";
import { ROOT } from "./setup.ts";

/** The config fields the bench reads; the bot and the gate get the whole object. */
export interface BuildConfig {
  store: unknown;
  batchMaxItems: number;
  authorityTimeoutMs: number;
  authorityMaxConcurrency: number;
  botConcurrency: number;
  /** SPEC §14 (BOT_CLAIM_SIZE); absent before it. */
  botClaimSize?: number;
}

export interface BuildStore {
  createCompany(input: { companyId: number; name: string }): Promise<unknown>;
  addWorkItems(input: NewWorkItems): Promise<AddWorkItemsOutcome>;
  listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]>;
  close(): Promise<void>;
}

export interface BotBuild {
  /** For the report: the folder or revision, and its commit. */
  label: string;
  loadConfig(env: Record<string, string | undefined>): BuildConfig;
  openStore(config: BuildConfig): Promise<BuildStore>;
  createAdapter(options: { baseUrl: string; timeoutMs: number }): AuthorityAdapter;
  createGate(deps: { store: BuildStore; adapter: AuthorityAdapter; config: BuildConfig; owner: string }): unknown;
  runOnce(deps: { store: BuildStore; gate: unknown; config: BuildConfig; owner: string; signal: AbortSignal; nextPassAt?: () => Date }): Promise<unknown>;
  /** Removes the temporary copy, if any. */
  dispose(): void;
}

const git = (args: string[], dir = ROOT) => runToEnd("git", ["-C", dir, ...args]).then((out) => out.trim());

/** `spec`: a folder holding src/bot/run-once.ts, or a git revision of this repository. */
export async function loadBuild(spec: string): Promise<BotBuild> {
  const dir = resolve(spec);
  let root: string;
  let label: string;
  let temporary: string | undefined;
  if (existsSync(join(dir, "src", "bot", "run-once.ts"))) {
    const commit = await git(["rev-parse", "--short", "HEAD"], dir).catch(() => "no git");
    const changed = (await git(["status", "--porcelain", "--", "src"], dir).catch(() => "")) !== "";
    label = `${dir === ROOT ? "this checkout" : dir} (${commit}${changed ? " + uncommitted changes" : ""})`;
    if (existsSync(join(dir, "node_modules"))) root = dir;
    else {
      root = temporary = withOurModules();
      cpSync(join(dir, "src"), join(root, "src"), { recursive: true });
      cpSync(join(dir, "package.json"), join(root, "package.json"));
    }
  } else {
    const commit = await git(["rev-parse", "--verify", "--short", `${spec}^{commit}`]).catch(() => {
      throw new Error(`--build ${spec}: neither a checkout (no src/bot/run-once.ts there) nor a git revision of ${ROOT}`);
    });
    label = spec === commit ? commit : `${spec} (${commit})`;
    root = temporary = withOurModules();
    await git(["archive", "--format=tar", "-o", join(root, "build.tar"), commit, "src", "package.json"]);
    await runToEnd("tar", ["-xf", join(root, "build.tar"), "-C", root]);
  }
  const load = async <T>(path: string) => (await import(pathToFileURL(join(root, "src", path)).href)) as T;
  const { loadConfig } = await load<{ loadConfig(env: Record<string, string | undefined>): BuildConfig }>("config.ts");
  const { openStore } = await load<{ openStore(location: unknown): Promise<BuildStore> }>("store/open-store.ts");
  const { createHttpAuthorityAdapter } = await load<{ createHttpAuthorityAdapter: BotBuild["createAdapter"] }>("bot/http-authority-adapter.ts");
  const { createAuthorityGate } = await load<{ createAuthorityGate: BotBuild["createGate"] }>("bot/authority-gate.ts");
  const { runBotOnce } = await load<{ runBotOnce: BotBuild["runOnce"] }>("bot/run-once.ts");
  return {
    label,
    loadConfig,
    openStore: (config) => openStore(config.store),
    createAdapter: createHttpAuthorityAdapter,
    createGate: createAuthorityGate,
    runOnce: runBotOnce,
    dispose: () => temporary && rmSync(temporary, { recursive: true, force: true }),
  };
}

/** A temporary folder whose node_modules is this checkout's. */
function withOurModules(): string {
  const root = mkdtempSync(join(tmpdir(), "wia-build-"));
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return root;
}
