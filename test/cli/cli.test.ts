import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import { DOCUMENTS } from "../helpers/documents.ts";
import { REPO_ROOT, runCli } from "../helpers/processes.ts";

// The CLI is tested as a separate process, the way operators run it.
const dir = mkdtempSync(join(tmpdir(), "wia-cli-"));
const env = { DATABASE_URL: `sqlite:${join(dir, "data", "cli.db")}`, LOG_LEVEL: "silent" };

const cli = (...args: string[]) => runCli(args, env);

/** How the README tells people to call the CLI: `-s` keeps npm's banner off stdout. */
const README_CLI = "npm run -s cli --";

describe("admin CLI", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("companies create prints {companyId, name}; a taken id fails with exit 1", async () => {
    const created = await cli("companies", "create", "--name", "Acme", "--company-id", "77", "--json");
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(created.json(), { companyId: 77, name: "Acme" });
    const again = await cli("companies", "create", "--name", "Acme", "--company-id", "77", "--json");
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    // With --json the failure is one JSON document too (issue 41).
    assert.equal(again.json<{ error: { code: string } }>().error.code, "FAILED");
  });

  test("companies rename gives a company the name the console shows; an unknown company fails, a bad name is a usage error", async () => {
    const renamed = await cli("companies", "rename", "--company-id", "77", "--name", "  Acme Dairy BV ", "--json");
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.deepEqual(renamed.json(), { companyId: 77, name: "Acme Dairy BV" });
    const unknown = await cli("companies", "rename", "--company-id", "7777", "--name", "Nobody", "--json");
    assert.equal(unknown.code, 1);
    assert.match(unknown.json<{ error: { message: string } }>().error.message, /no company 7777/);
    for (const name of ["x".repeat(201), "two\nlines"]) {
      const bad = await cli("companies", "rename", "--company-id", "77", "--name", name);
      assert.equal(bad.code, 2, name);
    }
  });

  test("keys create makes the company when new and shows the secret once; keys list never shows secrets", async () => {
    const created = await cli("keys", "create", "--company-id", "88", "--name", "erp", "--json");
    assert.equal(created.code, 0, created.stderr);
    const key = created.json<{ keyId: string; companyId: number; apiKey: string; secret: string }>();
    assert.equal(key.companyId, 88);
    assert.match(key.apiKey, /^wia_88_[0-9a-f]{16}$/);
    assert.ok(key.secret.length >= 43);
    const listed = await cli("keys", "list", "--company-id", "88", "--json");
    assert.equal(listed.code, 0);
    const { keys } = listed.json<{ keys: Array<{ keyId: string; revokedAt: string | null }> }>();
    assert.deepEqual(keys.map((k) => k.keyId), [key.keyId]);
    assert.ok(!listed.stdout.includes(key.secret));
    const human = await cli("keys", "list", "--company-id", "88");
    assert.ok(!human.stdout.includes(key.secret));
    assert.match(human.stdout, /active/);

    const revoked = await cli("keys", "revoke", "--key-id", key.keyId, "--json");
    assert.equal(revoked.code, 0);
    assert.ok(revoked.json<{ revokedAt: string }>().revokedAt);
    assert.equal((await cli("keys", "revoke", "--key-id", "0000000000000000")).code, 1);
  });

  test("webhooks secret is stable until rotated, stored encrypted; --revoke-previous ends the overlap", async () => {
    const first = (await cli("webhooks", "secret", "--company-id", "88", "--json")).json<{ companyId: number; secret: string }>();
    assert.match(first.secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
    assert.deepEqual(Object.keys(first), ["companyId", "secret"]);
    const same = (await cli("webhooks", "secret", "--company-id", "88", "--json")).json<{ secret: string }>();
    assert.equal(same.secret, first.secret);
    const stored = () => {
      const db = new Database(join(dir, "data", "cli.db"), { readonly: true });
      try {
        return db.prepare("SELECT webhook_secret, webhook_secret_previous, webhook_secret_previous_until FROM companies WHERE company_id = 88").get() as Record<string, string | null>;
      } finally {
        db.close();
      }
    };
    assert.match(stored().webhook_secret!, /^enc1\./, "encrypted at rest");
    assert.ok(!Object.values(stored()).some((value) => value?.includes(first.secret.slice(6))), "the column is not the secret");

    const rotated = await cli("webhooks", "secret", "--company-id", "88", "--rotate", "--json");
    const rotatedSecret = rotated.json<{ secret: string }>().secret;
    assert.notEqual(rotatedSecret, first.secret);
    assert.equal((await cli("webhooks", "secret", "--company-id", "88", "--json")).json<{ secret: string }>().secret, rotatedSecret);
    assert.match(stored().webhook_secret_previous!, /^enc1\./, "the previous secret is kept, encrypted");
    assert.ok(Date.parse(stored().webhook_secret_previous_until!) > Date.now() + 86_000_000, "for 24 h by default");
    assert.match((await cli("webhooks", "secret", "--company-id", "88", "--rotate")).stdout, /previous secret keeps signing too until .*--revoke-previous/s);

    const revoked = await cli("webhooks", "secret", "--company-id", "88", "--revoke-previous", "--json");
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(Object.keys(revoked.json()), ["companyId", "secret"]);
    assert.deepEqual([stored().webhook_secret_previous, stored().webhook_secret_previous_until], [null, null]);
    assert.equal((await cli("webhooks", "secret", "--company-id", "99999", "--json")).code, 1);
    assert.equal((await cli("webhooks", "secret", "--company-id", "99999", "--revoke-previous")).code, 1);
    const both = await cli("webhooks", "secret", "--company-id", "88", "--rotate", "--revoke-previous");
    assert.equal(both.code, 2);
    assert.match(both.stderr, /do not go together/);
  });

  test("the README's call through npm prints exactly one JSON document, and nothing else", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    // The quick start keeps what it prints: KEY=$(npm run -s cli -- keys create … --json).
    const call = readme.split("\n").map((line) => line.slice(line.indexOf(`${README_CLI} keys create`))).find((line) => line.startsWith(`${README_CLI} keys create`));
    assert.ok(call, `the README's quick start creates a key with ${README_CLI}`);
    const args = call.replace(/[)#].*$/, "").trim().split(/\s+/).slice(README_CLI.split(" ").length);
    assert.ok(args.includes("--json"), call);
    // The "npm" launcher runs exactly `npm run -s cli -- <args>`.
    const result = await runCli(args, env, { launcher: "npm" });
    assert.equal(result.code, 0, result.stderr);
    const key = result.json<{ companyId: number; apiKey: string; secret: string }>();
    assert.equal(result.stdout, `${JSON.stringify(key)}\n`, "one line, the document");
    assert.match(key.apiKey, new RegExp(`^wia_${key.companyId}_`));
  });

  test("the README, the guides in docs/ and the CLI's usage all call it `npm run -s cli --`", async () => {
    // docs/performance-log.md is left out: it records measurements, of the old way of calling too.
    const texts = DOCUMENTS.filter((file) => file !== "docs/performance-log.md");
    for (const file of texts) {
      for (const [call] of readFileSync(join(REPO_ROOT, file), "utf8").matchAll(/npm run(?: +-{1,2}[\w-]+)* +cli\b(?: +--)?/g)) {
        assert.equal(call, README_CLI, `${file}: ${call}`);
      }
    }
    const help = await cli("--help");
    assert.equal(help.code, 0);
    assert.ok(help.stdout.startsWith(`usage: ${README_CLI} <command>`), help.stdout);
  });

  test("a wrong flag, a missing flag or an unknown command prints usage and exits 2", async () => {
    for (const args of [["keys", "create", "--bogus"], ["keys", "create"], ["keys", "create", "--company-id", "abc"], ["frobnicate"], ["keys", "list", "--company-id", "1", "extra"]]) {
      const result = await cli(...args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, /usage/, args.join(" "));
    }
  });
});
