import { migrationLabel, missingKindsLabel, repeatableLabel, type MissingKinds } from "../../store/migrations.ts";
import type { DistributionResult, PlacementStep } from "../../store/postgres/distribution.ts";
import type { SchemaStatus, StorageSize, StoreIdentity } from "../../store/store.ts";
import type { RestoreResult } from "../../store/sqlite/restore.ts";
import type { VacuumResult } from "../../store/sqlite/vacuum-store.ts";
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

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toLocaleString("en", { maximumFractionDigits: 1 })} MB`;

/** The store's size and free space in a line or two (SPEC §22). */
export function storageLines(size: StorageSize): string[] {
  if (size.kind === "postgres") {
    return [
      `size: database ${megabytes(size.databaseBytes)} (${size.databaseBytes.toLocaleString("en")} bytes), schema ${size.schema} ${megabytes(size.schemaBytes)} (${size.schemaBytes.toLocaleString("en")} bytes, tables with their indexes); autovacuum makes erased rows' space reusable`,
    ];
  }
  return [
    `size: ${megabytes(size.bytes)} (${size.pages.toLocaleString("en")} pages of ${size.pageSize} bytes), free ${megabytes(size.freeBytes)} (${size.freePages.toLocaleString("en")} pages), file ${megabytes(size.fileBytes)} (${size.fileBytes.toLocaleString("en")} bytes)`,
    size.autoVacuum === "incremental"
      ? "auto_vacuum incremental: sweeps and erases hand free pages back as they go"
      : `auto_vacuum ${size.autoVacuum}: free pages stay in the file until a later write reuses them; run db vacuum once, with the service stopped, to switch to incremental`,
  ];
}

export const dbStatus: Command = {
  name: "db status",
  usage: "db status [--json]",
  summary:
    "the schema's migrations and (PostgreSQL) repeatable definitions: applied, pending (this version needs them) and any a later release applied; the store's size and free space; changes nothing",
  options: {},
  migrations: "ignore",
  async run({ store }): Promise<SchemaStatus & Partial<StoreIdentity> & { storage: StorageSize }> {
    return { ...(await store.schemaStatus()), ...(await store.storeIdentity()), storage: await store.storageSize() };
  },
  human: (result) => {
    const status = result as SchemaStatus & Partial<StoreIdentity> & { storage: StorageSize };
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
    return [...identity, ...lines, statusLine(status), ...storageLines(status.storage)].join("\n");
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
const POSTGRES_VACUUM = `DATABASE_URL names PostgreSQL, whose autovacuum makes erased rows' space reusable on its own; there is nothing to hand back by hand (docs/operations.md). ${NOTHING_CHANGED}`;

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
  const store = embeddedStorePath(config, POSTGRES_BACKUPS);
  const file = positionals[0];
  if (file === undefined) throw new UsageError(fileMissing);
  return refusalsAsFailures(() => operation(store, resolve(file)));
}

function embeddedStorePath(config: Parameters<Command["run"]>[0]["config"], onPostgres: string): string {
  if (config.store.kind !== "sqlite") throw new CommandFailedError(onPostgres);
  return config.store.path;
}

async function refusalsAsFailures(operation: () => Promise<unknown>): Promise<unknown> {
  const { BackupError } = await import("../../store/sqlite/backup.ts");
  try {
    return await operation();
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

export const dbVacuum: Command = {
  name: "db vacuum",
  usage: "db vacuum [--json]",
  summary:
    "the embedded store: hand every free page back to the file system, beside the running service; a store made before incremental auto_vacuum is switched to it once, which rewrites the file and needs the service stopped",
  options: {},
  opensStore: false,
  run: async ({ config }) => {
    const store = embeddedStorePath(config, POSTGRES_VACUUM);
    return refusalsAsFailures(async () => (await import("../../store/sqlite/vacuum-store.ts")).vacuumSqlite(store));
  },
  human: (result) => {
    const { file, autoVacuumBefore, rewritten, pagesReturned, before, after } = result as VacuumResult;
    return [
      rewritten
        ? `Rewrote ${file} in auto_vacuum mode incremental (it was ${autoVacuumBefore}): from now on sweeps and erases hand free pages back as they go.`
        : `Handed ${pagesReturned.toLocaleString("en")} free pages back in ${file}.`,
      `File ${megabytes(before.fileBytes)} before, ${megabytes(after.fileBytes)} after; ${after.freePages.toLocaleString("en")} pages free.`,
    ].join("\n");
  },
};
