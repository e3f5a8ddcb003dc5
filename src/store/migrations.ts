/**
 * Numbered plain-SQL migrations (`0001_initial.sql`, `0002_….sql`), one folder per backend.
 * Each backend applies the ones it has not recorded yet, in order, each in a transaction.
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
