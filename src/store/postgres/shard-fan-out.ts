/**
 * Reads across companies on a Citus cluster that has lost a worker node (SPEC §23).
 *
 * Such a read (a statement with `acrossCompanies`, ../port.ts) fails whole when any shard's node
 * does not answer, and the bot, the status loop, the webhook dispatcher and the retention sweeps
 * each begin with one: without this, one lost node would stop filing for every company. Once one
 * has failed that way, the reads go node by node for a while (FAN_OUT_MS): each node holding
 * shards (from the coordinator's metadata) is asked once, on a connection of this process's own
 * to that node, as the service's user, for the statement run on each of its shards. The nodes
 * that answer give their rows, merged here in the statement's order and cut to its LIMIT, so the
 * companies on them are served in the same order among themselves as before; the shards of the
 * others are counted (the `work_item_api_store_shard_groups_unreachable` gauge), and their
 * companies wait. After FAN_OUT_MS the next read tries the whole cluster again, which costs one
 * failed statement while the node is still down.
 *
 * A node is given CONNECT_TIMEOUT_MS to take a connection, so one that does not answer at all
 * costs seconds, not a lap. Each node's answer is one json_agg; the values the statement had as
 * parameters are written into its text as literals. The connections are kept: asking Citus to
 * run the statement on the nodes (master_run_on_worker) opened a new connection to each node for
 * each read, and on the test cluster filing for the reachable companies resumed 2.7–6.2 s after
 * the loss that way, 1.2 s with kept connections (test/store/citus-cluster.test.ts).
 */
import pg from "pg";
import { StoreUnavailableError } from "../errors.ts";
import type { AcrossCompanies, Statement } from "../port.ts";
import { TABLE_PLACEMENTS } from "./distribution.ts";

/** How long the reads go node by node after one across the cluster failed for a lost node. */
export const FAN_OUT_MS = 10_000;
/** How long a node may take to accept a connection of the node-by-node reads, in milliseconds. */
const CONNECT_TIMEOUT_MS = 2_000;

/**
 * Citus's error for a statement that needed a node it could not reach (connection class 08,
 * naming the remote node), or an error caused by one.
 */
export function isLostNode(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth += 1) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === "string" && code.startsWith("08") && typeof message === "string" && /remote node/i.test(message)) return true;
  }
  return false;
}

type Row = Record<string, unknown>;

/** What json_agg makes of a timestamptz; turned back into a Date, as pg gives it. */
const JSON_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}(:\d{2})?$/;

export class ShardFanOut {
  private fanOutUntil = 0;
  private unreachable = 0;
  /** Connections of its own, opened at the first lost node: a read inside a transaction must not wait for the transactions' pool. */
  private pool: pg.Pool | undefined;
  private readonly nodePools = new Map<string, pg.Pool>();
  private readonly shardMaps = new Map<string, { nodes: ShardsOfNode[]; until: number }>();

  constructor(private readonly url: string) {}

  /** Whether reads across companies go node by node now. */
  get active(): boolean {
    return Date.now() < this.fanOutUntil;
  }

  get shardGroupsUnreachable(): number {
    return this.unreachable;
  }

  /** A read across the whole cluster failed for a lost node: the next ones go node by node. */
  lostNode(): void {
    this.fanOutUntil = Date.now() + FAN_OUT_MS;
  }

  /** A read across the whole cluster answered: every shard group is reachable. */
  clusterAnswered(): void {
    this.unreachable = 0;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool?.end(), ...[...this.nodePools.values()].map((pool) => pool.end())]);
  }

  /** The statement's rows from every node that answers. */
  async all<R>(statement: Statement, text: string, values: readonly unknown[]): Promise<R[]> {
    const across = statement.acrossCompanies!;
    const nodes = await this.shardsByNode([across.table, ...(across.colocated ?? [])]);
    const answers = await Promise.allSettled(
      nodes.map(async (node) => {
        const { rows } = await this.nodePool(node).query<{ rows: Row[] }>(nodeCommand(text, node.shards, values));
        return rows[0]!.rows;
      }),
    );
    this.unreachable = nodes.filter((_, index) => answers[index]!.status === "rejected").reduce((sum, node) => sum + node.shards.length, 0);
    const reached = answers.flatMap((answer) => (answer.status === "fulfilled" ? [answer.value] : []));
    // A node that refused a statement may have lost a shard to a move since the map was read.
    if (reached.length < nodes.length) this.shardMaps.clear();
    if (reached.length === 0) throw new StoreUnavailableError("no node of the cluster answers", { cause: (answers[0] as PromiseRejectedResult | undefined)?.reason });
    const rows = reached.flat().map(withDates);
    rows.sort(byColumns(across.orderBy));
    const limit = across.limitParameter === undefined ? undefined : Number(values[across.limitParameter - 1]);
    return (limit === undefined ? rows : rows.slice(0, Math.max(0, limit))) as R[];
  }

  /**
   * Where the tables' shards are, from the coordinator's metadata, read again after FAN_OUT_MS:
   * per node, each shard group's shard of every table (colocated shards share a hash range).
   */
  private async shardsByNode(tables: readonly string[]): Promise<ShardsOfNode[]> {
    const key = tables.join(",");
    const known = this.shardMaps.get(key);
    if (known && Date.now() < known.until) return known.nodes;
    this.pool ??= openPool({ connectionString: this.url });
    try {
      const { rows } = await this.pool.query<ShardRow>(SHARDS_OF_TABLES, [tables]);
      const nodes = new Map<string, ShardsOfNode>();
      for (const row of rows) {
        const nodeKey = `${row.nodename}:${row.nodeport}`;
        const node = nodes.get(nodeKey) ?? { nodename: row.nodename, nodeport: row.nodeport, shards: [] };
        nodes.set(nodeKey, node);
        let group = node.shards.find((each) => each.range === row.range);
        if (!group) node.shards.push((group = { range: row.range, shardOf: new Map() }));
        group.shardOf.set(row.table_name, row.shard);
      }
      const found = [...nodes.values()];
      this.shardMaps.set(key, { nodes: found, until: Date.now() + FAN_OUT_MS });
      return found;
    } catch (error) {
      throw new StoreUnavailableError("PostgreSQL does not answer", { cause: error });
    }
  }

  /** Connections of their own to each node, as the service's user: no connection opened per read. */
  private nodePool({ nodename, nodeport }: ShardsOfNode): pg.Pool {
    const key = `${nodename}:${nodeport}`;
    let pool = this.nodePools.get(key);
    if (!pool) {
      const url = new URL(this.url);
      url.hostname = nodename;
      url.port = String(nodeport);
      pool = openPool({ connectionString: url.toString() });
      this.nodePools.set(key, pool);
    }
    return pool;
  }
}

interface ShardRow {
  table_name: string;
  shard: string;
  range: string;
  nodename: string;
  nodeport: number;
}

/** A shard group on one node: its hash range, and its shard of each table read. */
interface ShardGroup {
  range: string;
  shardOf: Map<string, string>;
}

interface ShardsOfNode {
  nodename: string;
  nodeport: number;
  shards: ShardGroup[];
}

/**
 * Every shard of the tables (in the connection's schema), qualified, with its hash range and its
 * node: each node is asked once for all of its shard groups, on one connection.
 */
const SHARDS_OF_TABLES = `
  SELECT t.name AS table_name, shard_name(s.logicalrelid, s.shardid) AS shard, s.shardminvalue AS range, n.nodename, n.nodeport
    FROM unnest($1::text[]) AS t(name)
    JOIN pg_dist_shard s ON s.logicalrelid = (quote_ident(current_schema()) || '.' || quote_ident(t.name))::regclass
    JOIN pg_dist_placement p ON p.shardid = s.shardid JOIN pg_dist_node n ON n.groupid = p.groupid
   WHERE n.noderole = 'primary'
   ORDER BY n.nodename, n.nodeport, s.shardminvalue::bigint, t.name`;

/** One node's command: the statement on each of its shard groups, their rows together as one JSON array. */
function nodeCommand(text: string, groups: ShardGroup[], values: readonly unknown[]): string {
  const parts = groups.map((group) => `(${shardText(text, group.shardOf, values)})`).join(" UNION ALL ");
  return `SELECT coalesce(json_agg(q), '[]') AS rows FROM (${parts}) q`;
}

function openPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool({ max: 2, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: 30_000, application_name: "work-item-api", ...config });
  pool.on("error", () => undefined);
  return pool;
}

/**
 * The statement as one shard group runs it: its shard's name for each tenant table it reads,
 * every other table qualified with the shards' schema (the node does not have the service's
 * search_path), the parameters as literals.
 */
export function shardText(text: string, shardOf: ReadonlyMap<string, string>, values: readonly unknown[]): string {
  const shard = [...shardOf.values()][0] ?? "";
  const schema = shard.includes(".") ? `${shard.slice(0, shard.indexOf("."))}.` : "";
  const names = TABLE_PLACEMENTS.map((placement) => placement.table).join("|");
  return text
    .replace(new RegExp(`(?<![.\\w"])(${names})(?![\\w"])`, "g"), (name) => shardOf.get(name) ?? `${schema}${name}`)
    .replace(/\$(\d+)/g, (_, index: string) => literal(values[Number(index) - 1]));
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  return pg.escapeLiteral(String(value));
}

function withDates(row: Row): Row {
  for (const [column, value] of Object.entries(row)) {
    if (typeof value === "string" && JSON_TIMESTAMP.test(value)) row[column] = new Date(value);
  }
  return row;
}

function sortKey(value: unknown): number | string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value instanceof Date) return value.getTime();
  if (typeof value === "number") return value;
  return String(value);
}

/** Ascending on each column in turn; nulls last, as PostgreSQL sorts them. */
export function byColumns(columns: AcrossCompanies["orderBy"]): (a: Row, b: Row) => number {
  return (a, b) => {
    for (const column of columns) {
      const [x, y] = [sortKey(a[column]), sortKey(b[column])];
      if (x === y) continue;
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      return x < y ? -1 : 1;
    }
    return 0;
  };
}
