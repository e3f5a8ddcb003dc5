import { migrationLabel, missingKindsLabel, repeatableLabel, type MissingKinds } from "../../store/migrations.ts";
import type { DistributionResult, PlacementStep } from "../../store/postgres/distribution.ts";
import type { SchemaStatus, StoreIdentity } from "../../store/store.ts";
import type { RestoreResult } from "../../store/sqlite/restore.ts";
import { resolve } from "node:path";
import { CommandFailedError, UsageError, type Command } from "../command.ts";

const NOTHING_CHANGED = "Nothing was changed.";

const describe = (step: PlacementStep) => `${step.table.padEnd(26)} ${step.role.padEnd(11)} ${step.outcome}`;

export const dbDistribute: Command = {
  name: "db distribute",
  usage: "db distribute [--json]",
  summary: "on a Citus cluster: distribute tenant tables by company_id, make the others reference tables (once, after the first migration; safe to repeat)",
  options: {},
  async run({ config, flags }): Promise<DistributionResult> {
    if (config.store.kind !== "postgres") {
      throw new CommandFailedError(`DATABASE_URL names a SQLite file; distribution is for PostgreSQL with the Citus extension. ${NOTHING_CHANGED}`);
    }
    // Each table is reported as it is placed: on a big cluster a table takes a while.
    const progress = flags.json === true ? undefined : (step: PlacementStep) => process.stdout.write(`${describe(step)}\n`);
    // Imported here, not above: the PostgreSQL driver is no part of --help or of the other commands.
    const { distributeSchema, DistributionRefusedError } = await import("../../store/postgres/distribution.ts");
    let result: DistributionResult;
    try {
      result = await distributeSchema(config.store.url, progress);
    } catch (error) {
      if (error instanceof DistributionRefusedError) throw new CommandFailedError(error.message);
      throw error;
    }
    if (!result.citus) {
      throw new CommandFailedError(
        result.installable
          ? `this database has not created the citus extension (the server has it). On the coordinator, with shared_preload_libraries = 'citus', run CREATE EXTENSION citus; then this command again. ${NOTHING_CHANGED}`
          : `this PostgreSQL has no Citus extension, so there is nothing to distribute: one PostgreSQL needs no distribution step (docs/scaling.md). ${NOTHING_CHANGED}`,
      );
    }
    return result;
  },
  human: (result) => {
    const { tables, schema, citusVersion } = result as Extract<DistributionResult, { citus: true }>;
    const changed = tables.filter((step) => step.outcome !== "already in place" && step.outcome !== "kept local").length;
    return `Schema ${schema} on Citus ${citusVersion}: ${tables.length} tables in place, ${changed} of them placed now.`;
  },
};

const statusLine = (status: SchemaStatus) => {
  const pending = [
    ...status.pending.map(migrationLabel),
    ...(status.repeatables ?? []).filter((repeatable) => repeatable.state === "pending").map(repeatableLabel),
    ...(status.missingKinds ?? []).map(missingKindsLabel),
  ];
  return [
    `${status.applied.length} applied`,
    pending.length === 0 ? "none pending" : `${pending.length} pending (${pending.join(", ")}): run db migrate`,
    ...(status.unknown.length === 0 ? [] : [`${status.unknown.length} applied by a later release (${status.unknown.map(migrationLabel).join(", ")})`]),
  ].join("; ");
};

export const dbStatus: Command = {
  name: "db status",
  usage: "db status [--json]",
  summary: "the schema's migrations and (PostgreSQL) repeatable definitions: applied, pending (this version needs them) and any a later release applied; changes nothing",
  options: {},
  migrations: "ignore",
  async run({ store }): Promise<SchemaStatus & Partial<StoreIdentity>> {
    return { ...(await store.schemaStatus()), ...(await store.storeIdentity()) };
  },
  human: (result) => {
    const status = result as SchemaStatus & Partial<StoreIdentity>;
    const identity =
      status.deploymentId === undefined
        ? []
        : [
            `deployment ${status.deploymentId}, store generation ${status.generation}, ${
              status.generationId === null ? "not restored (new items are keyed by their id)" : `id ${status.generationId}`
            }`,
          ];
    const lines = status.applied.map((migration) => `applied  ${migrationLabel(migration)}  ${migration.appliedAt}`);
    lines.push(...status.unknown.map((migration) => `later    ${migrationLabel(migration)}  ${migration.appliedAt}`));
    lines.push(...status.pending.map((migration) => `pending  ${migrationLabel(migration)}`));
    for (const repeatable of status.repeatables ?? []) {
      lines.push(`${repeatable.state.padEnd(7)}  ${repeatableLabel(repeatable)}${repeatable.appliedAt === null ? "" : `  ${repeatable.appliedAt}`}`);
    }
    lines.push(...(status.missingKinds ?? []).map((missing) => `pending  ${missingKindsLabel(missing)}`));
    return [...identity, ...lines, statusLine(status)].join("\n");
  },
};

interface MigrateResult {
  appliedNow: Array<{ version: number; name: string }>;
  /** The kinds the schema lacked, which the migrator added after the migrations. */
  kindsAddedNow: MissingKinds[];
  status: SchemaStatus;
}

export const dbMigrate: Command = {
  name: "db migrate",
  usage: "db migrate [--json]",
  summary: "apply the pending migrations and exit (with MIGRATE_ON_START=false, the step before starting a new release)",
  options: {},
  migrations: "ignore",
  async run({ store, flags }): Promise<MigrateResult> {
    const before = await store.schemaStatus();
    if (flags.json !== true && before.pending.length > 0) process.stdout.write(`applying ${before.pending.map(migrationLabel).join(", ")}\n`);
    const status = await store.migrate();
    const stillPending = new Set(status.pending.map((migration) => migration.version));
    return { appliedNow: before.pending.filter((migration) => !stillPending.has(migration.version)), kindsAddedNow: before.missingKinds ?? [], status };
  },
  human: (result) => {
    const { appliedNow, kindsAddedNow, status } = result as MigrateResult;
    const applied = [...appliedNow.map(migrationLabel), ...kindsAddedNow.map(missingKindsLabel)];
    return `${applied.length === 0 ? "Nothing to apply" : `Applied ${applied.join(", ")}`}. ${statusLine(status)}.`;
  },
};

const POSTGRES_BACKUPS = `DATABASE_URL names PostgreSQL, whose backups are its own (pg_dump, or base backups with WAL archiving): see docs/operations.md. ${NOTHING_CHANGED}`;

/**
 * A backup or a restore of the embedded store's file: PostgreSQL is pointed at its own tools, and
 * a refusal (BackupError) is the command's one-line failure. The SQLite modules are imported only
 * here: they are no part of the other commands.
 */
async function onEmbeddedStore(
  { config, positionals }: Parameters<Command["run"]>[0],
  fileMissing: string,
  operation: (store: string, file: string) => Promise<unknown>,
): Promise<unknown> {
  if (config.store.kind !== "sqlite") throw new CommandFailedError(POSTGRES_BACKUPS);
  const file = positionals[0];
  if (file === undefined) throw new UsageError(fileMissing);
  const { BackupError } = await import("../../store/sqlite/backup.ts");
  try {
    return await operation(config.store.path, resolve(file));
  } catch (error) {
    if (error instanceof BackupError) throw new CommandFailedError(error.message);
    throw error;
  }
}

export const dbBackup: Command = {
  name: "db backup",
  usage: "db backup FILE [--json]",
  summary: "the embedded store: a consistent copy into FILE (a new file) while the service runs, checked; prints {file, bytes, workItems, takenAt}",
  options: {},
  positionals: 1,
  opensStore: false,
  run: (context) =>
    onEmbeddedStore(context, "name the file to write the copy to", async (store, file) => (await import("../../store/sqlite/backup.ts")).backupSqlite(store, file)),
  human: (result) => {
    const { file, bytes, workItems, takenAt } = result as { file: string; bytes: number; workItems: number; takenAt: string };
    return `Backed up ${workItems.toLocaleString("en")} work items as they were at ${takenAt} to ${file} (${bytes.toLocaleString("en")} bytes), checked.`;
  },
};

export const dbRestore: Command = {
  name: "db restore",
  usage: "db restore FILE [--from-another-deployment] [--json]",
  summary:
    "the embedded store: put the backup FILE in place (checked; refused while any process uses the store, and for a copy of another deployment unless --from-another-deployment); the replaced store is kept beside it",
  options: { "from-another-deployment": { type: "boolean" } },
  positionals: 1,
  opensStore: false,
  run: (context) =>
    onEmbeddedStore(context, "name the backup file to restore", async (store, file) =>
      (await import("../../store/sqlite/restore.ts")).restoreSqlite(store, file, { fromAnotherDeployment: context.flags["from-another-deployment"] === true }),
    ),
  human: (result) => {
    const { file, restoredFrom, replaced, workItems, generation, generationId, deploymentId, copiedFromDeployment } = result as RestoreResult;
    return [
      `Restored ${workItems.toLocaleString("en")} work items from ${restoredFrom} into ${file} (deployment ${deploymentId}, store generation ${generation}, id ${generationId}).`,
      ...(copiedFromDeployment === null ? [] : [`The copy was of deployment ${copiedFromDeployment}; this store now has a deployment id of its own.`]),
      replaced === null ? "There was no store to replace." : `The replaced store is kept at ${replaced}.`,
      "Start the service: it files what the copy shows as not yet filed; the authority sees no second application.",
    ].join("\n");
  },
};
