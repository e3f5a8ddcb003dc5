/**
 * A throwaway PostgreSQL cluster of the machine's PostgreSQL (pg_createcluster), on its own
 * port, for tests that stop and start the database (`pg_ctlcluster … stop|start`). Stopping
 * it disturbs no other test; the shared cluster on 5432 is never touched.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { freePort } from "../../scripts/lib/free-port.ts";

export interface PgCluster {
  version: string;
  name: string;
  port: number;
  url: string;
  stop(): void;
  start(): void;
  isOnline(): boolean;
  /** Stops (if running) and deletes the cluster. */
  drop(): void;
}

/** Why throwaway clusters cannot be made here, or undefined when they can. */
export function pgClusterUnsupported(): string | undefined {
  if (!existsSync("/usr/bin/pg_createcluster") || !existsSync("/usr/bin/pg_ctlcluster")) return "pg_createcluster/pg_ctlcluster are not installed";
  if (process.getuid?.() !== 0) return "creating a PostgreSQL cluster needs root";
  if (!existsSync("/etc/postgresql") || readdirSync("/etc/postgresql").length === 0) return "no PostgreSQL version under /etc/postgresql";
  return undefined;
}

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 }).toString();

export async function createPgCluster(prefix = "wia_test"): Promise<PgCluster> {
  const version = readdirSync("/etc/postgresql").sort().at(-1)!;
  const name = `${prefix}_${process.pid}_${Date.now() % 100_000}`;
  const port = await freePort();
  run("pg_createcluster", [version, name, "-p", String(port), "--", "--auth=trust"]);
  const ctl = (action: "start" | "stop") => run("pg_ctlcluster", ["--skip-systemctl-redirect", version, name, action]);
  const cluster: PgCluster = {
    version,
    name,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => ctl("start"),
    stop: () => ctl("stop"),
    isOnline: () => / online /.test(run("pg_lsclusters", ["--no-header", version, name])),
    drop: () => {
      try {
        run("pg_dropcluster", ["--stop", version, name]);
      } catch (error) {
        process.stderr.write(`could not drop PostgreSQL cluster ${version}/${name}: ${String(error)}\n`);
      }
    },
  };
  try {
    cluster.start();
  } catch (error) {
    cluster.drop();
    throw error;
  }
  return cluster;
}
