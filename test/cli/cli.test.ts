import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";

// The CLI is tested as a separate process, the way operators run it.
const dir = mkdtempSync(join(tmpdir(), "wia-cli-"));
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, "data", "cli.db")}`, LOG_LEVEL: "silent" };

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], { env, encoding: "utf8", timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json<T>(stdout: string): T {
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 1, `exactly one JSON document: ${stdout}`);
  return JSON.parse(lines[0]!) as T;
}

describe("admin CLI", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("companies create prints {companyId, name}; a taken id fails with exit 1", () => {
    const created = cli("companies", "create", "--name", "Acme", "--company-id", "77", "--json");
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(json(created.stdout), { companyId: 77, name: "Acme" });
    const again = cli("companies", "create", "--name", "Acme", "--company-id", "77", "--json");
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    assert.equal(again.stdout, "");
  });

  test("keys create makes the company when new and shows the secret once; keys list never shows secrets", () => {
    const created = cli("keys", "create", "--company-id", "88", "--name", "erp", "--json");
    assert.equal(created.code, 0, created.stderr);
    const key = json<{ keyId: string; companyId: number; apiKey: string; secret: string }>(created.stdout);
    assert.equal(key.companyId, 88);
    assert.match(key.apiKey, /^wia_88_[0-9a-f]{16}$/);
    assert.ok(key.secret.length >= 43);
    const listed = cli("keys", "list", "--company-id", "88", "--json");
    assert.equal(listed.code, 0);
    const { keys } = json<{ keys: Array<{ keyId: string; revokedAt: string | null }> }>(listed.stdout);
    assert.deepEqual(keys.map((k) => k.keyId), [key.keyId]);
    assert.ok(!listed.stdout.includes(key.secret));
    const human = cli("keys", "list", "--company-id", "88");
    assert.ok(!human.stdout.includes(key.secret));
    assert.match(human.stdout, /active/);

    const revoked = cli("keys", "revoke", "--key-id", key.keyId, "--json");
    assert.equal(revoked.code, 0);
    assert.ok(json<{ revokedAt: string }>(revoked.stdout).revokedAt);
    assert.equal(cli("keys", "revoke", "--key-id", "0000000000000000").code, 1);
  });

  test("webhooks secret is stable until rotated, stored encrypted; --revoke-previous ends the overlap", () => {
    const first = json<{ companyId: number; secret: string }>(cli("webhooks", "secret", "--company-id", "88", "--json").stdout);
    assert.match(first.secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
    assert.deepEqual(Object.keys(first), ["companyId", "secret"]);
    const same = json<{ secret: string }>(cli("webhooks", "secret", "--company-id", "88", "--json").stdout);
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

    const rotated = cli("webhooks", "secret", "--company-id", "88", "--rotate", "--json");
    const rotatedSecret = json<{ secret: string }>(rotated.stdout).secret;
    assert.notEqual(rotatedSecret, first.secret);
    assert.equal(json<{ secret: string }>(cli("webhooks", "secret", "--company-id", "88", "--json").stdout).secret, rotatedSecret);
    assert.match(stored().webhook_secret_previous!, /^enc1\./, "the previous secret is kept, encrypted");
    assert.ok(Date.parse(stored().webhook_secret_previous_until!) > Date.now() + 86_000_000, "for 24 h by default");
    assert.match(cli("webhooks", "secret", "--company-id", "88", "--rotate").stdout, /previous secret keeps signing too until .*--revoke-previous/s);

    const revoked = cli("webhooks", "secret", "--company-id", "88", "--revoke-previous", "--json");
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(Object.keys(json(revoked.stdout)), ["companyId", "secret"]);
    assert.deepEqual([stored().webhook_secret_previous, stored().webhook_secret_previous_until], [null, null]);
    assert.equal(cli("webhooks", "secret", "--company-id", "99999", "--json").code, 1);
    assert.equal(cli("webhooks", "secret", "--company-id", "99999", "--revoke-previous").code, 1);
    const both = cli("webhooks", "secret", "--company-id", "88", "--rotate", "--revoke-previous");
    assert.equal(both.code, 2);
    assert.match(both.stderr, /do not go together/);
  });

  test("a wrong flag, a missing flag or an unknown command prints usage and exits 2", () => {
    for (const args of [["keys", "create", "--bogus"], ["keys", "create"], ["keys", "create", "--company-id", "abc"], ["frobnicate"], ["keys", "list", "--company-id", "1", "extra"]]) {
      const result = cli(...args);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.stderr, /usage/, args.join(" "));
    }
  });
});
