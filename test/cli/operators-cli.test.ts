/**
 * The operators commands of the admin CLI (SPEC §12.1), run as a separate process the way they
 * are used: passwords and tokens are shown once and only there, what they print works (checked
 * against the store the CLI wrote), usage errors exit 2 and failures exit 1.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { OperatorAuth } from "../../src/operators/operator-auth.ts";
import { verifyPassword } from "../../src/operators/passwords.ts";
import { openStore } from "../../src/store/open-store.ts";
import { runCli, type CliResult } from "../helpers/processes.ts";

const dir = mkdtempSync(join(tmpdir(), "wia-operators-cli-"));
const dbPath = join(dir, "data", "cli.db");
const env = { DATABASE_URL: `sqlite:${dbPath}`, LOG_LEVEL: "silent" };

const cli = (...args: string[]) => runCli(args, env);

/** The one JSON document a call that succeeded printed (CliResult.json throws on anything more). */
function json<T>(run: CliResult): T {
  assert.equal(run.code, 0, run.stderr);
  return run.json<T>();
}

/** Reads what the CLI stored, past the CLI. */
async function withStore<T>(work: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const store = await openStore({ kind: "sqlite", path: dbPath });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

describe("operators CLI", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("create shows the password once; it is stored only as a scrypt hash; list never shows either", async () => {
    const created = json<{ operatorId: string; email: string; role: string; password: string }>(await cli("operators", "create", "--email", " Ann@Example.com ", "--role", "operator", "--json"));
    assert.deepEqual(Object.keys(created).sort(), ["email", "operatorId", "password", "role"]);
    assert.equal(created.email, "ann@example.com");
    assert.equal(created.role, "operator");
    assert.ok(created.password.length >= 16);
    const stored = await withStore((store) => store.findOperatorByEmail("ann@example.com"));
    assert.match(stored!.passwordHash, /^scrypt\$/);
    assert.ok(await verifyPassword(created.password, stored!.passwordHash));

    const listed = json<Array<Record<string, unknown>>>(await cli("operators", "list", "--json"));
    assert.deepEqual(listed, [{ operatorId: created.operatorId, email: "ann@example.com", role: "operator", disabled: false, createdAt: listed[0]!.createdAt, signInMethod: "password" }]);
    const human = await cli("operators", "list");
    assert.equal(human.code, 0);
    for (const output of [JSON.stringify(listed), human.stdout]) {
      assert.ok(!output.includes(created.password));
      assert.doesNotMatch(output, /scrypt/);
    }
    assert.match(human.stdout, /ann@example\.com\s+operator\s+active\s+signs in with password/);
  });

  test("an operator of the identity provider: listed as signing in with oidc, and it has no password to reset", async () => {
    const identity = { issuer: "https://login.example.com", subject: "d-42", email: "dee@example.com", role: "viewer" as const };
    await withStore((store) => store.signInWithIdentity({ identity, newOperatorId: "op_dee", sessionHash: "s-dee", now: new Date().toISOString() }));
    const listed = json<Array<{ email: string; signInMethod: string }>>(await cli("operators", "list", "--json"));
    assert.equal(listed.find((operator) => operator.email === "dee@example.com")?.signInMethod, "oidc");
    assert.match((await cli("operators", "list")).stdout, /dee@example\.com\s+viewer\s+active\s+signs in with oidc/);
    const reset = await cli("operators", "reset-password", "--email", "dee@example.com");
    assert.equal(reset.code, 1);
    assert.match(reset.stderr, /signs in with the identity provider and has no password/);
  });

  test("usage errors exit 2; a taken e-mail exits 1 with a clear message", async () => {
    const badRole = await cli("operators", "create", "--email", "x@example.com", "--role", "root");
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /--role must be one of viewer, operator, admin/);
    assert.equal((await cli("operators", "create", "--role", "viewer")).code, 2);
    assert.equal((await cli("operators", "token")).code, 2);
    assert.equal((await cli("operators", "disable", "--email", "x@example.com", "--force")).code, 2);

    const taken = await cli("operators", "create", "--email", "ann@example.com", "--role", "viewer", "--json");
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /operators create: an operator with e-mail ann@example.com exists already/);
    // With --json the failure is one JSON document too (issue 41).
    assert.deepEqual(taken.json(), { error: { code: "FAILED", message: "an operator with e-mail ann@example.com exists already" } });
    const notAnEmail = await cli("operators", "create", "--email", "nobody", "--role", "viewer");
    assert.equal(notAnEmail.code, 1);
    assert.match(notAnEmail.stderr, /not an e-mail address/);
  });

  test("token issues a new wio_ token each call, accepted by the operator API's lookup", async () => {
    const first = json<{ operatorId: string; token: string }>(await cli("operators", "token", "--email", "ann@example.com", "--json"));
    const second = json<{ operatorId: string; token: string }>(await cli("operators", "token", "--email", "ann@example.com", "--json"));
    assert.match(first.token, /^wio_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(first.token, second.token);
    await withStore(async (store) => {
      const auth = new OperatorAuth(store);
      assert.equal((await auth.byToken(first.token))?.email, "ann@example.com");
      assert.equal((await auth.byToken(second.token))?.operatorId, first.operatorId);
    });
    const unknown = await cli("operators", "token", "--email", "nobody@example.com");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no operator with e-mail nobody@example.com/);
  });

  test("reset-password shows a new password once; the old one stops working", async () => {
    json(await cli("operators", "create", "--email", "bob@example.com", "--role", "viewer", "--json"));
    const before = await withStore((store) => store.findOperatorByEmail("bob@example.com"));
    const reset = json<{ email: string; password: string }>(await cli("operators", "reset-password", "--email", "bob@example.com", "--json"));
    assert.deepEqual(Object.keys(reset).sort(), ["email", "password"]);
    const after = await withStore((store) => store.findOperatorByEmail("bob@example.com"));
    assert.notEqual(after!.passwordHash, before!.passwordHash);
    assert.ok(await verifyPassword(reset.password, after!.passwordHash));
    assert.equal((await cli("operators", "reset-password", "--email", "nobody@example.com")).code, 1);
  });

  test("disable ends the operator's tokens; a disabled operator gets no new token", async () => {
    const { token } = json<{ token: string }>(await cli("operators", "token", "--email", "ann@example.com", "--json"));
    const disabled = json<{ email: string; disabled: boolean }>(await cli("operators", "disable", "--email", "ann@example.com", "--json"));
    assert.equal(disabled.disabled, true);
    assert.ok(!JSON.stringify(disabled).includes("scrypt"));
    assert.equal(await withStore((store) => new OperatorAuth(store).byToken(token)), undefined);
    const refused = await cli("operators", "token", "--email", "ann@example.com");
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /operator ann@example.com is disabled/);
    assert.equal((await cli("operators", "disable", "--email", "nobody@example.com")).code, 1);
    const listed = json<Array<{ email: string; disabled: boolean }>>(await cli("operators", "list", "--json"));
    assert.deepEqual(listed.map((o) => [o.email, o.disabled]).sort(), [["ann@example.com", true], ["bob@example.com", false], ["dee@example.com", false]]);
  });
});
