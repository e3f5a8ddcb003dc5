/**
 * Where each table of the PostgreSQL schema lives on a Citus cluster (docs/scaling.md §3), and
 * the step that puts it there (`npm run -s cli -- db distribute`).
 *
 * TABLE_PLACEMENTS is the one list: every table the migrations make, with its role, in the
 * order the step must take them (a table after every table it has a foreign key to, because
 * Citus only accepts a foreign key to a table it already placed). A test fails when the migrated
 * schema has a table this list does not name, or when the order, the keys or the foreign keys
 * do not fit the roles.
 */
import pg from "pg";

/**
 * - distributed: tenant data, hash-distributed on company_id and colocated with `companies`, so
 *   all of one company's rows live on one node;
 * - reference: belongs to no company; small, and copied whole to every node;
 * - local: stays on the coordinator only: the migrations' own bookkeeping, and the state every
 *   bot pass or authority call writes (SPEC §23). A write to a reference table is a two-phase
 *   commit on every node, so with one node down it fails, and filing for every company with it.
 */
export type TableRole = "distributed" | "reference" | "local";

export interface TablePlacement {
  table: string;
  role: TableRole;
}

export const DISTRIBUTION_COLUMN = "company_id";
/** The table every distributed table is colocated with. */
export const COLOCATION_ANCHOR = "companies";

export const TABLE_PLACEMENTS: readonly TablePlacement[] = [
  { table: "schema_migrations", role: "local" },
  { table: "schema_repeatables", role: "local" },
  // Process-wide state of the service and the operators' side: no company owns these rows.
  { table: "signing_secrets", role: "reference" },
  // Written on the hot path (each authority call, each pass): the coordinator's alone, which every
  // process reaches as it reaches the cluster, so that a lost worker node does not stop them.
  { table: "authority_breakers", role: "local" },
  { table: "authority_capacity", role: "local" },
  { table: "authority_slots", role: "local" },
  { table: "bot_last_pass", role: "local" },
  { table: "bot_pauses", role: "reference" },
  { table: "store_generation", role: "reference" },
  { table: "operators", role: "reference" },
  { table: "operator_tokens", role: "reference" },
  { table: "operator_sessions", role: "reference" },
  { table: "operator_identities", role: "reference" },
  // The operators' log: many of its actions name no company (see docs/scaling.md §3).
  { table: "audit_log", role: "reference" },
  // An erase under way (SPEC §22), the operators' as the audit log is; gone when it ends.
  { table: "company_erasures", role: "reference" },
  // Tenant data.
  { table: "companies", role: "distributed" },
  { table: "api_keys", role: "distributed" },
  { table: "work_batches", role: "distributed" },
  { table: "work_items", role: "distributed" },
  { table: "webhook_outbox", role: "distributed" },
  { table: "webhook_delivery_attempts", role: "distributed" },
  { table: "idempotency_keys", role: "distributed" },
  { table: "event_sequences", role: "distributed" },
  { table: "events", role: "distributed" },
  { table: "work_item_history", role: "distributed" },
  { table: "company_item_counts", role: "distributed" },
  { table: "filing_lanes", role: "distributed" },
  { table: "status_lanes", role: "distributed" },
];

/** What the step did with one table. */
export interface PlacementStep extends TablePlacement {
  outcome: "distributed on company_id" | "made a reference table" | "already in place" | "kept local" | "moved to the coordinator";
}

export type DistributionResult =
  | { citus: true; citusVersion: string; schema: string; tables: PlacementStep[] }
  /** `installable`: the server has the extension's files, but this database has not created it. */
  | { citus: false; installable: boolean };

/** A table that is in the wrong place, or missing from the list: nothing is changed past it. */
export class DistributionRefusedError extends Error {
  override name = "DistributionRefusedError";
}

/** Citus's view of a table: hash-distributed, a reference table, or not placed (absent). */
type CitusPlacement = "distributed" | "reference" | "citus local";

/**
 * With the citus extension in the database the connection string names, distributes or
 * references every table of TABLE_PLACEMENTS in the schema the connection works in, in order,
 * one table per transaction; tables already in place are left as they are, so running it again
 * (say after it was interrupted) does only what is missing. Without Citus it changes nothing.
 * `onStep` hears of each table as it is done.
 */
export async function distributeSchema(connectionString: string, onStep: (step: PlacementStep) => void = () => undefined): Promise<DistributionResult> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const citus = await client.query<{ extversion: string }>("SELECT extversion FROM pg_extension WHERE extname = 'citus'");
    if (citus.rows.length === 0) {
      const available = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'citus'");
      return { citus: false, installable: available.rows.length > 0 };
    }
    const schema = (await client.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]!.schema;
    await refuseUnlistedTables(client, schema);
    const tables: PlacementStep[] = [];
    for (const placement of TABLE_PLACEMENTS) {
      const step = await place(client, schema, placement).catch((error: unknown) => {
        if (error instanceof DistributionRefusedError) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new DistributionRefusedError(`Citus refused to place ${placement.table} (${placement.role}): ${reason}. The tables before it are in place; fix the cause and run this again.`);
      });
      tables.push(step);
      onStep(step);
    }
    return { citus: true, citusVersion: citus.rows[0]!.extversion, schema, tables };
  } finally {
    await client.end();
  }
}

/**
 * In the migrator's transaction, after an upgrade: on a schema already distributed, the listed
 * tables the upgrade created (or rebuilt) are placed at once, so the service never runs with a
 * tenant table left on the coordinator alone. A schema not distributed yet is left to the step.
 */
export async function placeNewTables(client: pg.ClientBase): Promise<PlacementStep[]> {
  const schema = (await client.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]!.schema;
  const anchor = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(COLOCATION_ANCHOR)}`;
  if ((await citusPlacement(client, anchor)) !== "distributed") return [];
  const present = await tablesOf(client, schema);
  const placed: PlacementStep[] = [];
  for (const placement of TABLE_PLACEMENTS.filter((p) => present.has(p.table))) {
    const step = await place(client, schema, placement);
    if (step.outcome !== "already in place" && step.outcome !== "kept local") placed.push(step);
  }
  return placed;
}

async function tablesOf(client: pg.ClientBase, schema: string): Promise<Set<string>> {
  const { rows } = await client.query<{ relname: string }>(
    "SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p') ORDER BY relname",
    [schema],
  );
  return new Set(rows.map((row) => row.relname));
}

async function refuseUnlistedTables(client: pg.Client, schema: string): Promise<void> {
  const present = await tablesOf(client, schema);
  const listed = new Set(TABLE_PLACEMENTS.map((placement) => placement.table));
  const unlisted = [...present].filter((table) => !listed.has(table));
  if (unlisted.length > 0) {
    throw new DistributionRefusedError(
      `schema ${schema} has tables that src/store/postgres/distribution.ts does not place: ${unlisted.join(", ")}. Add each to TABLE_PLACEMENTS with its role; nothing was changed.`,
    );
  }
  const missing = TABLE_PLACEMENTS.filter((placement) => !present.has(placement.table)).map((placement) => placement.table);
  if (missing.length > 0) {
    throw new DistributionRefusedError(`schema ${schema} lacks ${missing.join(", ")}: is it migrated? Nothing was changed.`);
  }
}

async function place(client: pg.ClientBase, schema: string, { table, role }: TablePlacement): Promise<PlacementStep> {
  const qualified = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;
  const now = await citusPlacement(client, qualified);
  if (role === "local") {
    // A schema distributed before these tables moved to the coordinator has them as reference
    // tables: a few rows of state each, copied back in a moment.
    if (now === "reference") {
      await client.query("SELECT undistribute_table($1)", [qualified]);
      return { table, role, outcome: "moved to the coordinator" };
    }
    if (now !== undefined) throw new DistributionRefusedError(`${table} is a Citus ${now} table, but it belongs on the coordinator alone`);
    return { table, role, outcome: "kept local" };
  }
  if (now === role) return { table, role, outcome: "already in place" };
  if (now !== undefined && now !== "citus local") {
    throw new DistributionRefusedError(`${table} is a ${now} table, but it should be a ${role} one; change it by hand (undistribute_table) and run this again`);
  }
  if (role === "reference") {
    await client.query("SELECT create_reference_table($1)", [qualified]);
    return { table, role, outcome: "made a reference table" };
  }
  const colocateWith = table === COLOCATION_ANCHOR ? "default" : `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(COLOCATION_ANCHOR)}`;
  await client.query("SELECT create_distributed_table($1, $2, colocate_with => $3)", [qualified, DISTRIBUTION_COLUMN, colocateWith]);
  return { table, role, outcome: "distributed on company_id" };
}

async function citusPlacement(client: pg.ClientBase, qualified: string): Promise<CitusPlacement | undefined> {
  const { rows } = await client.query<{ partmethod: string; repmodel: string }>(
    "SELECT partmethod, repmodel FROM pg_dist_partition WHERE logicalrelid = $1::regclass",
    [qualified],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.partmethod === "h") return "distributed";
  return row.repmodel === "t" ? "reference" : "citus local";
}
