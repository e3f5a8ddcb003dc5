/**
 * Issue 41, item 6: with --json, every outcome of the CLI is exactly one JSON document on
 * stdout, failures too, as {"error": {"code", "message"}} with a non-zero exit (a person still
 * reads the failure on stderr). Every command's
 * failure paths run through the real CLI: usage errors, unknown commands and arguments, a bad
 * configuration, a command that cannot do its job, and a schema this version cannot use.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { sqliteBackend } from "../helpers/backends.ts";
import { runCli } from "../helpers/processes.ts";
import { TEST_JWT_SECRET } from "../helpers/test-app.ts";

const db = await sqliteBackend.create();
after(() => db.cleanup());
const env = { DATABASE_URL: db.databaseUrl, JWT_SECRET: TEST_JWT_SECRET };

async function jsonFailure(args: string[], extraEnv: Record<string, string> = {}): Promise<{ exit: number | null; code: string; message: string }> {
  const result = await runCli([...args, "--json"], { ...env, ...extraEnv });
  assert.notEqual(result.code, 0, `${args.join(" ")} should fail`);
  const document = result.json<{ error?: { code?: unknown; message?: unknown } }>();
  assert.ok(document.error && typeof document.error.code === "string" && typeof document.error.message === "string", `${args.join(" ")}: ${result.stdout}`);
  assert.ok(result.stderr.includes(document.error.message), `${args.join(" ")}: the same message for a person on stderr`);
  return { exit: result.code, code: document.error.code, message: document.error.message };
}

test("--help --json is one document: the usage and every command", async () => {
  const result = await runCli(["--help", "--json"], env);
  assert.equal(result.code, 0);
  const document = result.json<{ usage: string; commands: Array<{ name: string; usage: string; summary: string }> }>();
  const names = document.commands.map((c) => c.name);
  for (const name of ["companies create", "keys list", "bot run-once", "operators create", "db status", "db migrate", "db backup", "db distribute"]) assert.ok(names.includes(name), name);
  const text = await runCli(["--help"], env);
  assert.equal(text.stdout.split("\n").filter((line) => /^ {2}\S/.test(line)).length, names.length, "the same commands as the text usage");
});

test("every command's usage errors are one JSON document with code USAGE and exit 2", async () => {
  const cases: string[][] = [
    ["keys", "list"],
    ["keys", "create", "--company-id", "abc"],
    ["keys", "create", "--bogus"],
    ["keys", "revoke"],
    ["companies", "create"],
    ["webhooks", "secret"],
    ["operators", "create", "--email", "x@example.com", "--role", "king"],
    ["operators", "disable"],
    ["db", "backup"],
    ["db", "status", "extra"],
    ["bot", "run-once", "--nope"],
  ];
  for (const args of cases) {
    const failure = await jsonFailure(args);
    assert.equal(failure.code, "USAGE", `${args.join(" ")}: ${failure.message}`);
    assert.equal(failure.exit, 2, args.join(" "));
  }
});

test("an unknown command, a bad configuration, a failed command and a schema behind are each one JSON document", async () => {
  assert.deepEqual(await jsonFailure(["frobnicate", "now"]), { exit: 2, code: "UNKNOWN_COMMAND", message: 'unknown command: "frobnicate now"' });
  const config = await jsonFailure(["keys", "list", "--company-id", "1"], { AUTHORITY_MAX_CONCURRENCY: "many" });
  assert.deepEqual([config.exit, config.code], [1, "CONFIGURATION"]);
  assert.match(config.message, /^AUTHORITY_MAX_CONCURRENCY:/);
  const failed = await jsonFailure(["keys", "revoke", "--key-id", "0000000000000000"]);
  assert.deepEqual([failed.exit, failed.code], [1, "FAILED"]);
  const behind = await jsonFailure(["keys", "list", "--company-id", "1"], { DATABASE_URL: `sqlite:${db.location.kind === "sqlite" ? db.location.path : ""}.fresh.db`, MIGRATE_ON_START: "false" });
  assert.deepEqual([behind.exit, behind.code], [1, "SCHEMA_BEHIND"]);
  assert.match(behind.message, /db migrate/);
});

test("without --json the same failures still speak to a person, on stderr", async () => {
  const result = await runCli(["keys", "list"], env);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /--company-id is required\n\nusage: npm run -s cli -- keys list/);
});
