import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { ConfigError, EnvSchema, loadConfig } from "../src/config.ts";
import { knowsHolidays } from "../src/domain/deadline.ts";
import { HANG_TIMEOUT_MS } from "./helpers/waiting.ts";

test("defaults follow SPEC §0", () => {
  const config = loadConfig({});
  assert.equal(config.port, 8080);
  assert.equal(config.host, "0.0.0.0");
  assert.equal(config.role, "all");
  assert.equal(config.store.kind, "sqlite");
  assert.match(config.store.kind === "sqlite" ? config.store.path : "", /data\/work-item-api\.db$/);
  assert.equal(config.tokenTtlSeconds, 1200);
  assert.equal(config.timeZone, "UTC");
  assert.equal(config.batchMaxItems, 1000);
  assert.equal(config.maxBodyBytes, 65536);
  assert.equal(config.botSchedule, "* * * * *");
  assert.equal(config.botLeaseSeconds, 300);
  assert.equal(config.botMaxAttempts, 5);
  assert.equal(config.authorityUrl, undefined);
  assert.equal(config.webhookAllowPrivateNetworks, false);
  assert.equal(config.rateLimitTenantRps, 200);
  assert.equal(config.rateLimitTenantBurst, 400);
  assert.equal(config.loginFailuresPerMinute, 10);
  assert.equal(config.logLevel, "info");
});

test("DEADLINE_HOLIDAYS: a calendar date-holidays does not have is refused at start; the default is one it has", () => {
  for (const unknown of ["XX", "NL-ZZ"]) {
    assert.throws(
      () => loadConfig({ DEADLINE_HOLIDAYS: unknown }),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith(`DEADLINE_HOLIDAYS: no public holiday calendar for "${unknown}"`),
    );
  }
  assert.equal(loadConfig({ DEADLINE_HOLIDAYS: "de-by" }).deadline.holidays, "DE-BY");
  // The default is not checked at start (that would load date-holidays into every CLI call).
  assert.equal(knowsHolidays(loadConfig({}).deadline.holidays), true);
});

test("BOT_CLAIM_SIZE defaults to AUTHORITY_MAX_CONCURRENCY", () => {
  assert.equal(loadConfig({}).botClaimSize, 8);
  assert.equal(loadConfig({ AUTHORITY_MAX_CONCURRENCY: "3" }).botClaimSize, 3);
  assert.equal(loadConfig({ AUTHORITY_MAX_CONCURRENCY: "3", BOT_CLAIM_SIZE: "12" }).botClaimSize, 12);
});

test("AUTHORITY_ABANDON_MS is at least AUTHORITY_TIMEOUT_MS: refused below it when set, raised to it when left at its default", () => {
  assert.equal(loadConfig({}).authorityAbandonMs, 60_000);
  assert.equal(loadConfig({ AUTHORITY_TIMEOUT_MS: "90000" }).authorityAbandonMs, 90_000);
  assert.equal(loadConfig({ AUTHORITY_TIMEOUT_MS: "2000", AUTHORITY_ABANDON_MS: "2000" }).authorityAbandonMs, 2000);
  assert.throws(
    () => loadConfig({ AUTHORITY_TIMEOUT_MS: "5000", AUTHORITY_ABANDON_MS: "4000" }),
    (error: unknown) => error instanceof ConfigError && error.message === "AUTHORITY_ABANDON_MS: 4000 ms must be at least AUTHORITY_TIMEOUT_MS (5000 ms)",
  );
});

test("tracing (SPEC §17): on only with an OTLP endpoint, over HTTP; a bad endpoint, protocol or exporter is refused at start", () => {
  assert.equal(loadConfig({}).tracing, undefined);
  assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing, { protocol: "http/protobuf" });
  assert.deepEqual(
    loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.example/v1/traces", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }).tracing,
    { protocol: "http/json" },
  );
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }).tracing, undefined);
  assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" }).tracing, undefined);
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }, /^OTEL_EXPORTER_OTLP_ENDPOINT: "127\.0\.0\.1:4318" is not an http\(s\) URL/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /^OTEL_EXPORTER_OTLP_PROTOCOL: .*http\/protobuf .* or http\/json/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "zipkin" }, /^OTEL_TRACES_EXPORTER: "zipkin" is not supported; expected otlp or none$/],
  ];
  for (const [env, message] of refused) {
    assert.throws(() => loadConfig(env), (error: unknown) => error instanceof ConfigError && message.test(error.message) && !error.message.includes("\n"), JSON.stringify(env));
  }
});

test("values are converted from their text", () => {
  const config = loadConfig({ PORT: "9000", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", DATABASE_URL: "postgres://u@127.0.0.1/db", ROLE: "worker" });
  assert.equal(config.port, 9000);
  assert.equal(config.webhookAllowPrivateNetworks, true);
  assert.deepEqual(config.store, { kind: "postgres", url: "postgres://u@127.0.0.1/db", poolSize: 10 });
  assert.equal(config.role, "worker");
});

test("CONSOLE_TZ: Europe/Amsterdam unless set, any IANA zone when set", () => {
  assert.equal(loadConfig({}).consoleTimeZone, "Europe/Amsterdam");
  assert.equal(loadConfig({ CONSOLE_TZ: "America/New_York" }).consoleTimeZone, "America/New_York");
});

const refused: Array<[string, string]> = [
  ["PORT", "eighty"],
  ["PORT", "70000"],
  ["ROLE", "both"],
  ["DATABASE_URL", "mysql://x"],
  ["JWT_SECRET", "too-short"],
  ["TOKEN_TTL_SECONDS", "0"],
  ["TZ", "Mars/Olympus"],
  ["CONSOLE_TZ", "Mars/Olympus"],
  ["CONSOLE_TZ", "Amsterdam"],
  ["BOT_SCHEDULE", "every minute"],
  ["WEBHOOK_ALLOW_PRIVATE_NETWORKS", "maybe"],
  ["LOG_LEVEL", "loud"],
  ["MAX_BODY_BYTES", "-5"],
  // The scheduler's settings (SPEC §14): not a number, negative, zero where that makes no sense.
  ["BOT_CLAIM_SIZE", "0"],
  ["BOT_CLAIM_SIZE", "-1"],
  ["BOT_CLAIM_SIZE", "eight"],
  ["BOT_CLAIM_SIZE", "2.5"],
  ["AUTHORITY_MAX_CONCURRENCY", "0"],
  ["AUTHORITY_MAX_CONCURRENCY", "many"],
  ["AUTHORITY_MAX_RPS", "-1"],
  ["AUTHORITY_BREAKER_FAILURES", "0"],
  ["AUTHORITY_BREAKER_SECONDS", "0"],
  ["BOT_LEASE_SECONDS", "0"],
  ["BOT_CONCURRENCY", "0"],
];
for (const [name, value] of refused) {
  test(`${name}=${value} is refused with a one-line message naming ${name}`, () => {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error: unknown) => error instanceof ConfigError && error.message.startsWith(`${name}:`) && !error.message.includes("\n"),
    );
  });
}

test("every variable has a description", () => {
  for (const [name, schema] of Object.entries(EnvSchema.properties)) {
    assert.ok((schema as { description?: string }).description, name);
  }
});

test("the server exits non-zero with one line on stderr for a bad value", () => {
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/server.ts"], {
    env: { ...process.env, PORT: "not-a-port", LOG_LEVEL: "silent" },
    encoding: "utf8",
    timeout: HANG_TIMEOUT_MS,
  });
  assert.notEqual(result.status, 0);
  const lines = result.stderr.trim().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /PORT/);
});
