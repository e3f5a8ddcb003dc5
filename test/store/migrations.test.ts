/**
 * Both backends carry the same numbered migrations, and PostgreSQL applies them once even when
 * several processes open a fresh database at the same moment.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readMigrations } from "../../src/store/migrations.ts";
import { openStore } from "../../src/store/open-store.ts";
import { availableBackends, withPostgresAdmin } from "../helpers/backends.ts";

const folder = (backend: string) => new URL(`../../src/store/${backend}/migrations/`, import.meta.url);

/**
 * Numbers a branch being worked on at the same time has taken, which this one leaves free until
 * the two are merged (0021: the work-item kinds' kinds_from_the_code). Remove once it is in.
 */
const TAKEN_ELSEWHERE = new Set([21]);

test("SQLite and PostgreSQL have the same migration numbers and names, numbered 1, 2, 3 …", () => {
  const sqlite = readMigrations(folder("sqlite")).map((m) => `${m.version}_${m.name}`);
  const postgres = readMigrations(folder("postgres")).map((m) => `${m.version}_${m.name}`);
  assert.ok(sqlite.length > 0);
  assert.deepEqual(postgres, sqlite);
  const versions = readMigrations(folder("sqlite")).map((m) => m.version);
  const expected = Array.from({ length: versions.at(-1)! }, (_, index) => index + 1).filter((version) => versions.includes(version) || !TAKEN_ELSEWHERE.has(version));
  assert.deepEqual(versions, expected, "no gaps (but a number taken elsewhere), no duplicates");
});

for (const backend of await availableBackends()) {
  describe(`migrations [${backend.name}]`, () => {
    test("stores opened at once on an empty database apply every migration exactly once", async () => {
      const location = await backend.create();
      try {
        // SQLite opens synchronously, so "at once" there means one after another on one file.
        const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(location.location)));
        await Promise.all(stores.map((store) => store.ping()));
        await Promise.all(stores.map((store) => store.close()));
        const reopened = await openStore(location.location);
        await reopened.close();
        const expected = readMigrations(folder(backend.name)).map((m) => m.version);
        if (backend.name === "postgres") {
          const schema = /search_path%3D(\w+)/.exec(location.databaseUrl)?.[1];
          const { rows } = await withPostgresAdmin((client) => client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`));
          assert.deepEqual(rows.map((row) => row.version), expected);
        } else {
          const { default: Database } = await import("better-sqlite3");
          const db = new Database(location.location.kind === "sqlite" ? location.location.path : "", { readonly: true });
          const versions = (db.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as Array<{ version: number }>).map((row) => row.version);
          db.close();
          assert.deepEqual(versions, expected);
        }
      } finally {
        await location.cleanup();
      }
    });

    if (backend.name === "postgres") {
      test("refuses to open when sessions default to an isolation level stricter than READ COMMITTED", async () => {
        const location = await backend.create();
        try {
          const strict = location.databaseUrl.replace("options=", "options=-c%20default_transaction_isolation%3Dserializable%20");
          await assert.rejects(openStore({ kind: "postgres", url: strict }), /default_transaction_isolation is "serializable"/);
        } finally {
          await location.cleanup();
        }
      });
    }
  });
}
