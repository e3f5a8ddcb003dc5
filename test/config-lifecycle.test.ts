import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../src/config.ts";

test("lifecycle settings have the documented defaults", () => {
  const config = loadConfig({});
  assert.deepEqual(
    [config.botLeaseSeconds, config.botMaxAttempts, config.botRetryBaseMs, config.botRetryMaxMs, config.authorityUrl, config.authorityTimeoutMs],
    [300, 5, 30_000, 1_800_000, undefined, 10_000],
  );
  assert.deepEqual(config.authoritySim, { host: "127.0.0.1", port: 8090, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
  assert.deepEqual(
    [config.webhookAllowPrivateNetworks, config.webhookTimeoutMs, config.webhookRetryWindowSeconds, config.webhookLeaseSeconds],
    [false, 15_000, 86_400, 60],
  );
});

test("a lease no longer than one call is a configuration error", () => {
  assert.throws(() => loadConfig({ BOT_LEASE_SECONDS: "10" }), (error: unknown) => error instanceof ConfigError && /BOT_LEASE_SECONDS.*AUTHORITY_TIMEOUT_MS/.test(error.message));
  assert.throws(() => loadConfig({ WEBHOOK_LEASE_SECONDS: "15" }), /WEBHOOK_LEASE_SECONDS.*WEBHOOK_TIMEOUT_MS/);
  assert.equal(loadConfig({ BOT_LEASE_SECONDS: "2", AUTHORITY_TIMEOUT_MS: "1500" }).botLeaseSeconds, 2);
});

test("simulator switches are checked like every variable", () => {
  assert.throws(() => loadConfig({ AUTHORITY_SIM_ERROR_RATE: "1.5" }), /AUTHORITY_SIM_ERROR_RATE/);
  assert.throws(() => loadConfig({ AUTHORITY_URL: "ftp://x" }), /AUTHORITY_URL/);
  assert.equal(loadConfig({ AUTHORITY_SIM_OUTAGE: "true", AUTHORITY_SIM_ERROR_RATE: "0.25" }).authoritySim.errorRate, 0.25);
});
