/**
 * Reads across companies on a Citus cluster that has lost a worker node (SPEC §23).
 *
 * Such a read (a statement with `acrossCompanies`, ../port.ts) fails whole when any shard's node
 * does not answer, and the bot, the status loop, the webhook dispatcher and the retention sweeps
 * each begin with one: without this, one lost node would stop filing for every company. Once one
 * has failed that way, the reads go node by node for a while (FAN_OUT_MS): each node holding
 * shards is asked once, on one connection (Citus's master_run_on_worker, which answers for each
 * node alone), for the statement run on each of its shards. The nodes that answer give their
 * rows, merged here in the statement's order and cut to its LIMIT, so the companies on them are
 * served in the same order among themselves as before; the shards of the others are counted (the
 * `work_item_api_store_shard_groups_unreachable` gauge), and their companies wait. After
 * FAN_OUT_MS the next read tries the whole cluster again, which costs one failed statement while
 * the node is still down.
 *
 * The nodes are asked with a short connect timeout (CONNECT_TIMEOUT_MS), so a node that does not
 * answer at all costs seconds, not Citus's default of half a minute. Each node's answer is one
 * json_agg; the values the statement had as parameters are written into its text as literals.
 */
import pg from "pg";
import { StoreUnavailableError } from "../errors.ts";
import type { AcrossCompanies, Statement } from "../port.ts";
import { TABLE_PLACEMENTS } from "./distribution.ts";

/** How long the reads go node by node after one across the cluster failed for a lost node. */
export const FAN_OUT_MS = 10_000;
/** citus.node_connection_timeout for the node-by-node reads, in milliseconds. */
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
    await this.pool?.end();
  }

  /** The statement's rows from every shard that answers. */
  async all<R>(statement: Statement, text: string, values: readonly unknown[]): Promise<R[]> {
    const across = statement.acrossCompanies!;
    const pool = (this.pool ??= openFanOutPool(this.url));
    let answers: Array<{ success: boolean; result: string; shards: number }>;
    try {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query(`SET LOCAL citus.node_connection_timeout = ${CONNECT_TIMEOUT_MS}`);
        const nodes = (await client.query<{ nodename: string; nodeport: number; shards: string[] }>(SHARDS_BY_NODE, [across.table])).rows;
        const commands = nodes.map((node) => nodeCommand(text, across.table, node.shards, values));
        const { rows } = await client.query<{ success: boolean; result: string }>(
          "SELECT success, result FROM master_run_on_worker($1::text[], $2::integer[], $3::text[], true)",
          [nodes.map((node) => node.nodename), nodes.map((node) => node.nodeport), commands],
        );
        await client.query("COMMIT");
        answers = rows.map((row, index) => ({ ...row, shards: nodes[index]!.shards.length }));
      } finally {
        client.release();
      }
    } catch (error) {
      throw new StoreUnavailableError("PostgreSQL does not answer", { cause: error });
    }
    const reached = answers.filter((answer) => answer.success);
    this.unreachable = answers.filter((answer) => !answer.success).reduce((sum, answer) => sum + answer.shards, 0);
    if (reached.length === 0) throw new StoreUnavailableError("no node of the cluster answers");
    const rows = reached.flatMap((answer) => (JSON.parse(answer.result) as Row[]).map(withDates));
    rows.sort(byColumns(across.orderBy));
    const limit = across.limitParameter === undefined ? undefined : Number(values[across.limitParameter - 1]);
    return (limit === undefined ? rows : rows.slice(0, Math.max(0, limit))) as R[];
  }
}

/**
 * Each node holding shards of the table (in the connection's schema), with those shards' names,
 * qualified: the node is asked once for all of them, on one connection.
 */
const SHARDS_BY_NODE = `
  SELECT n.nodename, n.nodeport, array_agg(shard_name(s.logicalrelid, s.shardid) ORDER BY s.shardid) AS shards
    FROM pg_dist_shard s JOIN pg_dist_placement p ON p.shardid = s.shardid JOIN pg_dist_node n ON n.groupid = p.groupid
   WHERE s.logicalrelid = (quote_ident(current_schema()) || '.' || quote_ident($1))::regclass AND n.noderole = 'primary'
   GROUP BY n.nodename, n.nodeport ORDER BY n.nodename, n.nodeport`;

/** One node's command: the statement on each of its shards, their rows together as one JSON array. */
function nodeCommand(text: string, table: string, shards: string[], values: readonly unknown[]): string {
  const parts = shards.map((shard) => `(${shardText(text, table, shard, values)})`).join(" UNION ALL ");
  return `SELECT coalesce(json_agg(q), '[]') FROM (${parts}) q`;
}

function openFanOutPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: "work-item-api" });
  pool.on("error", () => undefined);
  return pool;
}

/**
 * The statement as one shard runs it: the shard's name for its tenant table, every other table
 * qualified with the shard's schema (the node does not have the service's search_path), the
 * parameters as literals.
 */
export function shardText(text: string, table: string, shard: string, values: readonly unknown[]): string {
  const schema = shard.includes(".") ? `${shard.slice(0, shard.indexOf("."))}.` : "";
  const names = TABLE_PLACEMENTS.map((placement) => placement.table).join("|");
  return text
    .replace(new RegExp(`(?<![.\\w"])(${names})(?![\\w"])`, "g"), (name) => (name === table ? shard : `${schema}${name}`))
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
