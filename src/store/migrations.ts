/**
 * Numbered plain-SQL migrations (`0001_initial.sql`, `0002_….sql`), one folder per backend.
 * Each backend applies the ones it has not recorded yet, in order, each in a transaction.
 * PostgreSQL also has repeatable definitions of its functions (postgres/repeatables.ts), applied
 * after them when they changed; and each store then takes the kinds the code names (kinds.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export function readMigrations(folder: URL): Migration[] {
  const path = fileURLToPath(folder);
  return readdirSync(path)
    .map((file) => ({ file, match: MIGRATION_FILE.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({ version: Number(match[1]), name: match[2] ?? file, sql: readFileSync(`${path}/${file}`, "utf8") }))
    .sort((a, b) => a.version - b.version);
}

/** The migration that gave a store its deployment id, and restored generations random ids (SPEC §24). */
export const GENERATION_IDS_MIGRATION = 20;

/** A migration as the schema records it. */
export interface AppliedMigration {
  version: number;
  name: string;
  appliedAt: string;
}

/** A repeatable definition (PostgreSQL's, postgres/repeatables.ts) against the schema. */
export interface RepeatableStatus {
  /** The function it defines. */
  name: string;
  /** This version's revision; for `later`, the one a later release applied. */
  revision: number;
  /** applied: as this version has it; pending: this version needs it applied; later: a later release's, left as it is. */
  state: "applied" | "pending" | "later";
  appliedAt: string | null;
}

/** What the schema holds against the migrations this version of the code knows (SPEC §18). */
export interface SchemaStatus {
  applied: AppliedMigration[];
  /** Known here, not applied yet: this version needs them. */
  pending: Array<{ version: number; name: string }>;
  /** Applied, but unknown here: a later release migrated the schema (additive only, so this version still works). */
  unknown: AppliedMigration[];
  /** PostgreSQL's repeatable definitions; none on SQLite. */
  repeatables?: RepeatableStatus[];
  /** The kinds this version writes that the schema does not take yet (kinds.ts): the migrator adds them. */
  missingKinds?: MissingKinds[];
}

/** A `kind` column the schema does not let take some of the kinds this version writes. */
export interface MissingKinds {
  table: string;
  kinds: string[];
}

/** How a process treats migrations when it opens the store. */
export type MigrationMode =
  /** Apply the pending ones (MIGRATE_ON_START=true). */
  | "apply"
  /** Refuse to open while any is pending (MIGRATE_ON_START=false). */
  | "require"
  /** Neither (`db status`, `db migrate`). */
  | "ignore";

export const migrationLabel = (migration: { version: number; name: string }) => `${String(migration.version).padStart(4, "0")}_${migration.name}`;

export const repeatableLabel = (repeatable: { name: string; revision: number }) => `${repeatable.name} (repeatable, revision ${repeatable.revision})`;

export const missingKindsLabel = (missing: MissingKinds) => `the kinds ${missing.kinds.join(", ")} of ${missing.table}`;

export function schemaStatus(known: Migration[], applied: AppliedMigration[]): SchemaStatus {
  const appliedVersions = new Set(applied.map((migration) => migration.version));
  const knownVersions = new Set(known.map((migration) => migration.version));
  return {
    applied: applied.filter((migration) => knownVersions.has(migration.version)),
    pending: known.filter((migration) => !appliedVersions.has(migration.version)).map(({ version, name }) => ({ version, name })),
    unknown: applied.filter((migration) => !knownVersions.has(migration.version)),
  };
}

/** A process whose schema lacks migrations it needs, with MIGRATE_ON_START=false: it does not start. */
export class SchemaBehindError extends Error {
  override name = "SchemaBehindError";
  constructor(
    readonly pending: SchemaStatus["pending"],
    readonly pendingRepeatables: RepeatableStatus[] = [],
    readonly missingKinds: MissingKinds[] = [],
  ) {
    const labels = [...pending.map(migrationLabel), ...pendingRepeatables.map(repeatableLabel)];
    const lacks = [...(labels.length === 0 ? [] : [`${labels.length === 1 ? "migration" : `${labels.length} migrations`} ${labels.join(", ")}`]), ...missingKinds.map(missingKindsLabel)];
    super(`the schema lacks ${lacks.join(", ")} that this version needs: run \`npm run -s cli -- db migrate\` (MIGRATE_ON_START=false)`);
  }
}
