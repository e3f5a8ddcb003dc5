/**
 * Rolling upgrades (SPEC §18): every migration after the last release (releases.json) only adds,
 * unless it marks itself as a contract step with its reason; and the rule's reader finds each
 * construct it refuses, and passes what only adds.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { readMigrations } from "../../src/store/migrations.ts";
import { contractReason, expandViolations, type ExpandRule } from "../helpers/migration-rules.ts";

interface Release {
  version: string;
  commit: string;
  date: string;
  lastMigration: number;
}

const releases = (JSON.parse(readFileSync(new URL("../../releases.json", import.meta.url), "utf8")) as { releases: Release[] }).releases;
const lastRelease = releases.at(-1)!;
const migrations = (backend: "postgres" | "sqlite") => readMigrations(new URL(`../../src/store/${backend}/migrations/`, import.meta.url));

test("the release record names each release's version, commit and last migration, in order", () => {
  assert.ok(releases.length >= 1);
  for (const release of releases) {
    assert.match(release.version, /^\d+\.\d+\.\d+$/);
    assert.match(release.commit, /^[0-9a-f]{40}$/);
    assert.match(release.date, /^\d{4}-\d{2}-\d{2}$/);
  }
  const numbers = releases.map((release) => release.lastMigration);
  assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b));
  for (const backend of ["postgres", "sqlite"] as const) {
    assert.ok(migrations(backend).some((migration) => migration.version === lastRelease.lastMigration), `${backend} has migration ${lastRelease.lastMigration}`);
  }
  assert.match(readFileSync(new URL("../../CHANGELOG.md", import.meta.url), "utf8"), new RegExp(`^## ${lastRelease.version.replace(/\./g, "\\.")} \\(`, "m"));
});

test("the last release's migrations are the ones its commit holds, unchanged", (t) => {
  // A shallow clone may not have the commit: then there is nothing to compare with.
  const listed = spawnSync("git", ["ls-tree", "--name-only", `${lastRelease.commit}:src/store/postgres/migrations`], { encoding: "utf8" });
  if (listed.status !== 0) return t.skip(`commit ${lastRelease.commit.slice(0, 7)} is not in this clone`);
  for (const backend of ["postgres", "sqlite"] as const) {
    for (const migration of migrations(backend).filter((m) => m.version <= lastRelease.lastMigration)) {
      const file = `src/store/${backend}/migrations/${String(migration.version).padStart(4, "0")}_${migration.name}.sql`;
      const released = spawnSync("git", ["show", `${lastRelease.commit}:${file}`], { encoding: "utf8" });
      assert.equal(released.status, 0, `${file} is in release ${lastRelease.version}`);
      assert.equal(migration.sql, released.stdout, `${file} changed after release ${lastRelease.version}`);
    }
  }
});

test(`every migration after release ${lastRelease.version} (migration ${lastRelease.lastMigration}) only adds, or says why it is a contract step`, () => {
  const found = (["postgres", "sqlite"] as const).flatMap((backend) =>
    migrations(backend)
      .filter((migration) => migration.version > lastRelease.lastMigration && contractReason(migration.sql) === undefined)
      .flatMap((migration) => expandViolations(migration.sql, backend).map((v) => `${backend} ${migration.version}: ${v.rule}: ${v.statement.slice(0, 120)}`)),
  );
  assert.deepEqual(found, []);
});

test("the reader refuses what an older release's processes would trip on, and passes what only adds", () => {
  const refused: Array<[string, "postgres" | "sqlite", ExpandRule]> = [
    ["DROP TABLE bot_pauses", "sqlite", "drop"],
    ["ALTER TABLE work_items DROP COLUMN document_reference", "postgres", "drop"],
    ["ALTER TABLE work_items DROP document_reference", "postgres", "drop"],
    ["ALTER TABLE work_items RENAME COLUMN document_reference TO doc_ref", "sqlite", "rename"],
    ["ALTER TABLE work_items RENAME TO items", "postgres", "rename"],
    ["ALTER TABLE work_items ADD COLUMN trace_parent text NOT NULL", "postgres", "not null without default"],
    ["ALTER TABLE work_items ADD trace_parent TEXT NOT NULL", "sqlite", "not null without default"],
    ["ALTER TABLE work_items ALTER COLUMN webhook_url SET NOT NULL", "postgres", "not null without default"],
    ["CREATE INDEX work_items_trace ON work_items (company_id, trace_parent)", "postgres", "blocking index"],
    ["CREATE UNIQUE INDEX IF NOT EXISTS work_items_ref ON public.work_items (company_id, customer_reference)", "postgres", "blocking index"],
  ];
  for (const [sql, backend, rule] of refused) assert.deepEqual(expandViolations(sql, backend).map((v) => v.rule), [rule], sql);

  const accepted: Array<[string, "postgres" | "sqlite"]> = [
    ["ALTER TABLE work_items ADD COLUMN trace_parent text", "postgres"],
    ["ALTER TABLE work_items ADD COLUMN attempts_left integer NOT NULL DEFAULT 5", "postgres"],
    ["ALTER TABLE work_items ADD CONSTRAINT work_items_trace_length CHECK (length(trace_parent) < 100) NOT VALID", "postgres"],
    ["ALTER TABLE work_items ALTER COLUMN webhook_url DROP NOT NULL", "postgres"],
    ["ALTER TABLE work_items ALTER COLUMN kind DROP DEFAULT", "postgres"],
    ["CREATE INDEX CONCURRENTLY work_items_trace ON work_items (company_id, trace_parent)", "postgres"],
    ["CREATE INDEX work_items_trace ON work_items (company_id, trace_parent)", "sqlite"],
    ["CREATE TABLE backups (backup_id bigint PRIMARY KEY, taken_at timestamptz NOT NULL); CREATE INDEX backups_taken ON backups (taken_at)", "postgres"],
    ["CREATE TABLE notes (company_id bigint NOT NULL, note text); ALTER TABLE notes ADD COLUMN kind text NOT NULL", "postgres"],
    ["-- dropping nothing: DROP TABLE in a comment\nCREATE TABLE x (a int)", "sqlite"],
  ];
  for (const [sql, backend] of accepted) assert.deepEqual(expandViolations(sql, backend), [], sql);

  const marked = "-- contract: 0009's triggers are gone since 0016; nothing of release 1.0.0 reads this table\nDROP TABLE company_counter_log;";
  assert.equal(contractReason(marked), "0009's triggers are gone since 0016; nothing of release 1.0.0 reads this table");
  assert.equal(contractReason("DROP TABLE x"), undefined);
});
