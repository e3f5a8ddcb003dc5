/**
 * Repeatable definitions (Flyway's repeatable migrations): a database function that numbered
 * migrations would otherwise redefine in full, each time it changes, lives in one file of
 * ./repeatable/ instead, named after it, and the migrator applies it again when it changed
 * (migrate.ts, after the numbered migrations, in their transaction and under their lock). Tables
 * stay with the numbered migrations.
 *
 * Each file's first line is `-- revision: <n>`, and the schema records the revision and the text's
 * checksum it applied (schema_repeatables). A file is applied when the schema has not recorded it,
 * when its revision is newer than the recorded one, or when its text changed under the same
 * revision (while it is written; test/store/repeatables.test.ts pins each revision's text). Never
 * when the recorded revision is newer: during a rolling upgrade a process of the previous release
 * that migrates after this one must not put its older definition back (SPEC §18).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { PoolClient } from "pg";
import type { RepeatableStatus } from "../migrations.ts";

export const REPEATABLES = new URL("./repeatable/", import.meta.url);

export interface Repeatable {
  /** The file's name without `.sql`: the function it defines. */
  name: string;
  revision: number;
  /** sha256 of the file's text, hex. */
  checksum: string;
  sql: string;
}

/** A repeatable as the schema records it. */
export interface RecordedRepeatable {
  name: string;
  revision: number;
  checksum: string;
  appliedAt: string;
}

const REPEATABLE_FILE = /^([a-z0-9_]+)\.sql$/;
const REVISION_LINE = /^-- revision: (\d+)\n/;

export function readRepeatables(folder: URL = REPEATABLES): Repeatable[] {
  const path = fileURLToPath(folder);
  return readdirSync(path)
    .map((file) => REPEATABLE_FILE.exec(file)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort()
    .map((name) => {
      const sql = readFileSync(`${path}/${name}.sql`, "utf8");
      const revision = REVISION_LINE.exec(sql)?.[1];
      if (revision === undefined) throw new Error(`repeatable ${name}.sql does not begin with its "-- revision: <n>" line`);
      return { name, revision: Number(revision), checksum: createHash("sha256").update(sql).digest("hex"), sql };
    });
}

/** Whether this version's `file` is to be applied over what the schema recorded of it. */
const isDue = (file: Repeatable, recorded: RecordedRepeatable | undefined) =>
  recorded === undefined || file.revision > recorded.revision || (file.revision === recorded.revision && file.checksum !== recorded.checksum);

export function dueRepeatables(files: Repeatable[], recorded: RecordedRepeatable[]): Repeatable[] {
  const byName = new Map(recorded.map((entry) => [entry.name, entry]));
  return files.filter((file) => isDue(file, byName.get(file.name)));
}

export function repeatableStatus(files: Repeatable[], recorded: RecordedRepeatable[]): RepeatableStatus[] {
  const byName = new Map(recorded.map((entry) => [entry.name, entry]));
  const ours = files.map((file): RepeatableStatus => {
    const entry = byName.get(file.name);
    if (isDue(file, entry)) return { name: file.name, revision: file.revision, state: "pending", appliedAt: null };
    if (entry!.revision > file.revision) return { name: file.name, revision: entry!.revision, state: "later", appliedAt: entry!.appliedAt };
    return { name: file.name, revision: file.revision, state: "applied", appliedAt: entry!.appliedAt };
  });
  const known = new Set(files.map((file) => file.name));
  const later = recorded.filter((entry) => !known.has(entry.name)).map((entry): RepeatableStatus => ({ name: entry.name, revision: entry.revision, state: "later", appliedAt: entry.appliedAt }));
  return [...ours, ...later];
}

export const CREATE_REPEATABLES_RECORD =
  "CREATE TABLE IF NOT EXISTS schema_repeatables (name text PRIMARY KEY, revision integer NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL)";

export const READ_REPEATABLES = "SELECT name, revision, checksum, applied_at FROM schema_repeatables ORDER BY name";

export const toRecorded = (row: { name: string; revision: number; checksum: string; applied_at: Date }): RecordedRepeatable => ({
  name: row.name,
  revision: Number(row.revision),
  checksum: row.checksum,
  appliedAt: new Date(row.applied_at).toISOString(),
});

/** Applies each repeatable and records it, in the caller's transaction. */
export async function applyRepeatables(client: PoolClient, due: Repeatable[]): Promise<void> {
  for (const repeatable of due) {
    await client.query(repeatable.sql);
    await client.query(
      `INSERT INTO schema_repeatables (name, revision, checksum, applied_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (name) DO UPDATE SET revision = excluded.revision, checksum = excluded.checksum, applied_at = excluded.applied_at`,
      [repeatable.name, repeatable.revision, repeatable.checksum],
    );
  }
}
