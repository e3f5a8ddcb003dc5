/**
 * Migrations as a step of their own (SPEC §18), black box on both stores, through the real CLI
 * and server processes: `db status` and `db migrate` (with --json one document each), a process
 * with MIGRATE_ON_START=false refusing to start on a schema that lacks a migration it needs
 * (one line naming `db migrate`), and starting on a schema a later release moved ahead.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { readMigrations, type SchemaStatus } from "../../src/store/migrations.ts";
import { availableBackends, queryRows, writePastStore } from "../helpers/backends.ts";
import { runCli, startScript, startServer, stopAll } from "../helpers/processes.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

after(() => stopAll());

const KNOWN = readMigrations(new URL("../../src/store/sqlite/migrations/", import.meta.url)).length;

for (const backend of await availableBackends()) {
  describe(`migrations as a step of their own [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("status, a refused start, migrate, a start; a schema a later release moved ahead still starts", async () => {
      const db = await backend.create();
      try {
        const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, MIGRATE_ON_START: "false" };

        const fresh = await runCli(["db", "status", "--json"], env);
        assert.equal(fresh.code, 0, fresh.stderr);
        const before = fresh.json<SchemaStatus>();
        assert.deepEqual([before.applied.length, before.pending.length, before.unknown.length], [0, KNOWN, 0]);
        assert.deepEqual(before.pending[0], { version: 1, name: "initial" });

        // Any other command, and the server, refuse the schema while a migration is pending.
        const refusedCli = await runCli(["keys", "list", "--company-id", "1", "--json"], env);
        assert.notEqual(refusedCli.code, 0);
        assert.match(refusedCli.stderr, /db migrate/);
        const refused = startScript("src/server.ts", [], { ...env, PORT: "0", HOST: "127.0.0.1" });
        const code = await refused.exited;
        assert.notEqual(code, 0, refused.output());
        const lines = refused.stderr().trim().split("\n");
        assert.equal(lines.length, 1, refused.stderr());
        assert.match(lines[0]!, /the schema lacks \d+ migrations 0001_initial, .* that this version needs: run `npm run -s cli -- db migrate`/);
        assert.equal((await queryRows<{ n: number }>(db.location, "SELECT count(*) AS n FROM schema_migrations").catch(() => [{ n: 0 }]))[0]!.n, 0, "nothing was applied");

        const migrated = await runCli(["db", "migrate", "--json"], env);
        assert.equal(migrated.code, 0, migrated.stderr);
        const result = migrated.json<{ appliedNow: unknown[]; status: SchemaStatus }>();
        assert.equal(result.appliedNow.length, KNOWN);
        assert.deepEqual([result.status.applied.length, result.status.pending.length], [KNOWN, 0]);
        const again = await runCli(["db", "migrate"], env);
        assert.equal(again.code, 0, again.stderr);
        assert.match(again.stdout, /^Nothing to apply\. \d+ applied; none pending\.$/m);

        const server = await startServer(env);
        assert.equal((await fetch(`${server.baseUrl}/readyz`)).status, 200);
        await server.stop();

        // A later release applied a migration this version does not know: additive, so this one starts and works.
        await writePastStore(db.location, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'later_release', '2026-11-27T00:00:00Z')");
        const ahead = (await runCli(["db", "status", "--json"], env)).json<SchemaStatus>();
        assert.deepEqual(ahead.unknown.map((migration) => [migration.version, migration.name]), [[9999, "later_release"]]);
        assert.deepEqual(ahead.pending, []);
        const human = await runCli(["db", "status"], env);
        assert.match(human.stdout, /later {4}9999_later_release/);
        for (const migrateOnStart of ["false", "true"]) {
          const started = await startServer({ ...env, MIGRATE_ON_START: migrateOnStart });
          assert.equal((await fetch(`${started.baseUrl}/readyz`)).status, 200);
          await started.stop();
        }
      } finally {
        await db.cleanup();
      }
    });
  });
}
