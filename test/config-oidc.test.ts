/**
 * The console's OpenID Connect settings (SPEC §19): off unless OIDC_ISSUER is set; a
 * half-configured provider, or a console left with no way in, stops the process with one line
 * naming what is missing.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../src/config.ts";
import { HANG_TIMEOUT_MS } from "./helpers/waiting.ts";

const COMPLETE = {
  OIDC_ISSUER: "https://login.example.com/realms/ops",
  OIDC_CLIENT_ID: "work-item-console",
  OIDC_REDIRECT_URL: "https://ops.example.com/console/oidc/callback",
  OIDC_ADMIN_VALUES: "console-admin",
  OIDC_VIEWER_VALUES: "console-viewer, auditors",
};

const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.message.split("\n").length, 1);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
};

test("without OIDC_ISSUER: passwords only, and password sign-in on", () => {
  const config = loadConfig({});
  assert.equal(config.oidc, undefined);
  assert.equal(config.consolePasswordSignIn, true);
});

test("a complete provider: its settings, the defaults, role values as lists, no secret for a public client", () => {
  const config = loadConfig(COMPLETE);
  assert.deepEqual(config.oidc, {
    issuer: COMPLETE.OIDC_ISSUER,
    clientId: "work-item-console",
    clientSecret: undefined,
    redirectUrl: COMPLETE.OIDC_REDIRECT_URL,
    scopes: "openid email profile",
    roleClaim: "roles",
    roleValues: { admin: ["console-admin"], operator: [], viewer: ["console-viewer", "auditors"] },
    displayName: "your company account",
    allowHttp: false,
  });
  assert.equal(loadConfig({ ...COMPLETE, OIDC_CLIENT_SECRET: "s3cret", CONSOLE_PASSWORD_SIGNIN: "false" }).consolePasswordSignIn, false);
});

test("half-configured: each missing variable is named", () => {
  assert.match(refusal({ OIDC_ISSUER: COMPLETE.OIDC_ISSUER, OIDC_ADMIN_VALUES: "a" }), /^OIDC_CLIENT_ID, OIDC_REDIRECT_URL: missing; OIDC_ISSUER is set/);
  assert.match(refusal({ ...COMPLETE, OIDC_CLIENT_ID: "" }), /^OIDC_CLIENT_ID: missing/);
  assert.match(refusal({ OIDC_CLIENT_ID: "work-item-console" }), /^OIDC_ISSUER: not set, but OIDC_CLIENT_ID is/);
  assert.match(refusal({ OIDC_CLIENT_SECRET: "s", OIDC_ADMIN_VALUES: "a" }), /^OIDC_ISSUER: not set, but OIDC_CLIENT_SECRET, OIDC_ADMIN_VALUES are/);
  assert.match(refusal({ ...COMPLETE, OIDC_ADMIN_VALUES: "", OIDC_VIEWER_VALUES: " , " }), /^OIDC_ADMIN_VALUES, OIDC_OPERATOR_VALUES, OIDC_VIEWER_VALUES: none is set/);
});

test("no way into the console, plain http to the internet, a wrong callback or no openid scope are refused", () => {
  assert.match(refusal({ CONSOLE_PASSWORD_SIGNIN: "false" }), /^CONSOLE_PASSWORD_SIGNIN: false without OIDC_ISSUER/);
  assert.match(refusal({ ...COMPLETE, OIDC_ISSUER: "http://login.example.com" }), /^OIDC_ISSUER: must be https/);
  assert.match(refusal({ ...COMPLETE, OIDC_ISSUER: "ldap://login.example.com" }), /^OIDC_ISSUER: /);
  assert.match(refusal({ ...COMPLETE, OIDC_REDIRECT_URL: "https://ops.example.com/callback" }), /^OIDC_REDIRECT_URL: must be the console's callback/);
  assert.match(refusal({ ...COMPLETE, OIDC_SCOPES: "email profile" }), /^OIDC_SCOPES: must include openid/);
  for (const local of ["http://127.0.0.1:8081", "http://localhost:8081/realms/ops", "http://idp.test:8081"]) {
    assert.equal(loadConfig({ ...COMPLETE, OIDC_ISSUER: local }).oidc?.allowHttp, true, local);
  }
});

test("the server stops with one line naming the missing variable", () => {
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/server.ts"], {
    env: { ...process.env, OIDC_ISSUER: COMPLETE.OIDC_ISSUER, OIDC_REDIRECT_URL: COMPLETE.OIDC_REDIRECT_URL, OIDC_ADMIN_VALUES: "a", OIDC_CLIENT_ID: "", LOG_LEVEL: "silent" },
    encoding: "utf8",
    timeout: HANG_TIMEOUT_MS,
  });
  assert.notEqual(result.status, 0);
  const lines = result.stderr.trim().split("\n");
  assert.deepEqual(lines, ["work-item-api: configuration error: OIDC_CLIENT_ID: missing; OIDC_ISSUER is set, so OpenID Connect sign-in needs OIDC_CLIENT_ID and OIDC_REDIRECT_URL too"]);
});
