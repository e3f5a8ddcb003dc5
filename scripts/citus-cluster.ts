/**
 * A Citus cluster on one machine, for trying the service on a sharded store and for the tests
 * that lose a worker node or move shards (SPEC §23; docs/scaling.md §3.7): a coordinator and
 * worker nodes, each a PostgreSQL cluster of its own (initdb) on its own port under one folder,
 * with the citus extension in a database `test` and the workers registered on the coordinator.
 *
 *   npm run -s citus-cluster -- up [--workers 2] [--port 5440] [--folder DIR]
 *   npm run -s citus-cluster -- stop-node 2 | start-node 2
 *   npm run -s citus-cluster -- down
 *
 * The coordinator listens on --port and worker n on --port + n. Needs PostgreSQL's server
 * programs (initdb, pg_ctl) and Citus installed into that PostgreSQL (docs/scaling.md §3.7 says
 * how to build it); PostgreSQL refuses to run as root, so a root caller runs them as the
 * `postgres` user. The settings are a test cluster's: no fsync, trust on 127.0.0.1 only.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";

export interface ClusterOptions {
  folder: string;
  /** The coordinator's port; worker n listens on port + n. */
  port: number;
  workers: number;
}

export const DEFAULT_CLUSTER: ClusterOptions = { folder: join(tmpdir(), "wia-citus-cluster"), port: 5440, workers: 2 };

/** Node 0 is the coordinator, 1… the workers. */
const nodePort = (options: ClusterOptions, node: number) => options.port + node;
const nodeFolder = (options: ClusterOptions, node: number) => join(options.folder, node === 0 ? "coordinator" : `worker-${node}`);
export const databaseUrl = (options: ClusterOptions, node = 0) => `postgres://postgres@127.0.0.1:${nodePort(options, node)}/test`;

/** Where this machine's PostgreSQL server programs are (the newest version's), or undefined. */
export function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((version) => existsSync(join(root, version, "bin/initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** Why a Citus cluster cannot be started here, in one line; undefined when it can. */
export function citusMissing(): string | undefined {
  const bin = postgresBin();
  if (!bin) return "no PostgreSQL server programs here (/usr/lib/postgresql/*/bin/initdb)";
  const shareDir = spawnSync(join(bin, "pg_config"), ["--sharedir"], { encoding: "utf8" }).stdout?.trim();
  const control = shareDir ? join(shareDir, "extension/citus.control") : undefined;
  if (!control || !existsSync(control)) return "Citus is not installed into this machine's PostgreSQL (docs/scaling.md §3.7 builds it)";
  return undefined;
}

/** Runs a PostgreSQL program as the postgres user when this process is root (the server refuses root). */
function asPostgres(program: string, args: string[]): string {
  const bin = postgresBin()!;
  const asRoot = process.getuid?.() === 0;
  const [command, commandArgs] = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]] : [join(bin, program), args];
  return execFileSync(command, commandArgs, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function settings(port: number, folder: string): string {
  return [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${folder}'`,
    // pg_stat_statements for citus_stat_statements: which statements ran on one shard (test/store/citus-cluster.test.ts).
    "shared_preload_libraries = 'citus,pg_stat_statements'",
    "citus.stat_statements_track = 'all'",
    // Shard moves copy by logical replication (docs/scaling.md §3.7).
    "wal_level = logical",
    "max_replication_slots = 20",
    "max_wal_senders = 20",
    // Citus commits a transaction that wrote on two nodes in two phases.
    "max_prepared_transactions = 200",
    "max_connections = 200",
    "citus.max_background_task_executors_per_node = 2",
    // A test cluster: its data may be lost with the machine.
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    "log_min_messages = warning",
    "",
  ].join("\n");
}

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function onNode<T>(options: ClusterOptions, node: number, work: (client: pg.Client) => Promise<T>, database = "test"): Promise<T> {
  const client = new pg.Client({ host: "127.0.0.1", port: nodePort(options, node), user: "postgres", database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function startNode(options: ClusterOptions, node: number): void {
  const folder = nodeFolder(options, node);
  asPostgres("pg_ctl", ["-D", folder, "-l", join(folder, "server.log"), "-w", "-t", "120", "start"]);
}

/** `immediate` is a crash as far as the node's data is concerned: it recovers from its WAL at the next start. */
export function stopNode(options: ClusterOptions, node: number, mode: "fast" | "immediate" = "fast"): void {
  asPostgres("pg_ctl", ["-D", nodeFolder(options, node), "-m", mode, "-w", "stop"]);
}

/** Makes (when missing) and starts every node, and registers the workers; safe to run again. */
export async function clusterUp(options: ClusterOptions = DEFAULT_CLUSTER): Promise<string> {
  const missing = citusMissing();
  if (missing) throw new Error(missing);
  mkdirSync(options.folder, { recursive: true });
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", options.folder]);
  for (let node = 0; node <= options.workers; node += 1) {
    const folder = nodeFolder(options, node);
    const name = node === 0 ? "coordinator" : `worker ${node}`;
    if (!existsSync(join(folder, "PG_VERSION"))) {
      say(`${name}: initdb ${folder}`);
      asPostgres("initdb", ["-D", folder, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
      writeFileSync(join(folder, "postgresql.auto.conf"), settings(nodePort(options, node), folder));
    }
    const running = spawnSync("runuser", ["-u", "postgres", "--", join(postgresBin()!, "pg_ctl"), "-D", folder, "status"]).status === 0;
    if (!running) {
      say(`${name}: starting on 127.0.0.1:${nodePort(options, node)}`);
      startNode(options, node);
    }
    await onNode(options, node, async (client) => {
      const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = 'test'");
      if (exists.rowCount === 0) await client.query("CREATE DATABASE test");
    }, "postgres");
    await onNode(options, node, async (client) => {
      await client.query("CREATE EXTENSION IF NOT EXISTS citus");
      await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    });
  }
  await onNode(options, 0, async (client) => {
    await client.query("SELECT citus_set_coordinator_host('127.0.0.1', $1)", [nodePort(options, 0)]);
    for (let node = 1; node <= options.workers; node += 1) {
      const known = await client.query("SELECT 1 FROM pg_dist_node WHERE nodename = '127.0.0.1' AND nodeport = $1", [nodePort(options, node)]);
      if (known.rowCount === 0) {
        say(`coordinator: adding worker ${node}`);
        await client.query("SELECT citus_add_node('127.0.0.1', $1)", [nodePort(options, node)]);
      }
    }
  });
  say(`a coordinator and ${options.workers} workers are up: ${databaseUrl(options)}`);
  return databaseUrl(options);
}

/** Stops every node and removes the folder. */
export function clusterDown(options: ClusterOptions = DEFAULT_CLUSTER): void {
  for (let node = options.workers; node >= 0; node -= 1) {
    if (!existsSync(join(nodeFolder(options, node), "postmaster.pid"))) continue;
    say(`${node === 0 ? "coordinator" : `worker ${node}`}: stopping`);
    stopNode(options, node, "fast");
  }
  rmSync(options.folder, { recursive: true, force: true });
}

function parseArgs(argv: string[]): { command: string; node?: number; options: ClusterOptions } {
  const options = { ...DEFAULT_CLUSTER };
  const [command = "", ...rest] = argv;
  let node: number | undefined;
  for (let index = 0; index < rest.length; index += 1) {
    const flag = rest[index]!;
    const value = rest[index + 1];
    const integer = (what: string) => {
      if (value === undefined || !/^\d+$/.test(value)) throw new Error(`${flag} needs ${what}`);
      index += 1;
      return Number(value);
    };
    if (flag === "--workers") options.workers = integer("a number of worker nodes");
    else if (flag === "--port") options.port = integer("a port");
    else if (flag === "--folder" && value !== undefined) {
      options.folder = value;
      index += 1;
    } else if (/^\d+$/.test(flag)) node = Number(flag);
    else throw new Error(`unknown argument ${flag}`);
  }
  return { command, node, options };
}

async function main(): Promise<void> {
  const { command, node, options } = parseArgs(process.argv.slice(2));
  if (command === "up") {
    process.stdout.write(`${await clusterUp(options)}\n`);
  } else if (command === "down") {
    clusterDown(options);
  } else if ((command === "stop-node" || command === "start-node") && node !== undefined && node >= 1 && node <= options.workers) {
    if (command === "stop-node") stopNode(options, node, "immediate");
    else startNode(options, node);
  } else {
    throw new Error("usage: citus-cluster up [--workers N] [--port P] [--folder DIR] | down | stop-node N | start-node N");
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((error: unknown) => {
    process.stderr.write(`citus-cluster: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
