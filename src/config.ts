/**
 * The only reader of `process.env`. The environment is parsed once, against one TypeBox
 * schema with defaults, into a frozen `Config` that is passed down to everything else.
 */
import { resolve } from "node:path";
import { Cron } from "croner";
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { OIDC_ENV, readOidcSettings, type OidcSettings } from "./config-oidc.ts";
import { knowsHolidays, type DeadlineRule } from "./domain/deadline.ts";
import type { TracingSettings } from "./telemetry/tracing.ts";

const Int = (minimum: number, maximum: number, def: number, description: string) =>
  Type.Integer({ minimum, maximum, default: def, description });

const OtlpProtocol = Type.Union([Type.Literal("http/protobuf"), Type.Literal("http/json")], {
  description: "http/protobuf (the default) or http/json: OTLP over HTTP",
});

/** Environment variables, their defaults and meaning (SPEC §0, §8). The README table mirrors it. */
export const EnvSchema = Type.Object({
  PORT: Int(0, 65535, 8080, "port the API listens on"),
  HOST: Type.String({ minLength: 1, default: "0.0.0.0", description: "address the API listens on" }),
  ROLE: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")], {
    default: "all",
    description: "all = API + bot + webhook dispatcher; api = HTTP only; worker = bot + dispatcher only",
  }),
  DATABASE_URL: Type.String({
    pattern: "^(sqlite:.+|postgres(ql)?://.+)$",
    default: "sqlite:./data/work-item-api.db",
    description: "sqlite:<path> or postgres://…",
  }),
  DATABASE_POOL_SIZE: Int(1, 1000, 10, "PostgreSQL connections per process (keep N processes × this below the server's limit, or use a pooler)"),
  MIGRATE_ON_START: Type.Boolean({ default: true, description: "apply pending migrations when the process starts; false: refuse to start while one is pending (run `db migrate` as a step of its own)" }),
  JWT_SECRET: Type.Optional(
    Type.String({ minLength: 32, description: "HS256 key (UTF-8 bytes of the text); generated and kept by the store when unset" }),
  ),
  DATA_ENCRYPTION_KEY: Type.Optional(
    Type.String({ minLength: 32, description: "key of the encryption at rest (AES-256-GCM) of webhook secrets; generated and kept by the store when unset" }),
  ),
  JWT_ISSUER: Type.String({ minLength: 1, default: "work-item-api", description: "iss claim of issued tokens" }),
  JWT_AUDIENCE: Type.String({ minLength: 1, default: "work-item-api", description: "aud claim of issued tokens" }),
  TOKEN_TTL_SECONDS: Int(1, 86400, 1200, "token lifetime in seconds"),
  TZ: Type.String({ minLength: 1, default: "UTC", description: "time zone of the Ping text" }),
  BATCH_MAX_ITEMS: Int(1, 1_000_000, 1000, "items per batch before a new one opens"),
  MAX_BODY_BYTES: Int(1024, 10_485_760, 65536, "request body limit in bytes"),
  MAX_BULK_BODY_BYTES: Int(1024, 67_108_864, 4_194_304, "body limit in bytes of AddWorkItemCreateBulk (up to 1,000 items)"),
  BOT_SCHEDULE: Type.String({ minLength: 1, default: "* * * * *", description: "cron of the bot's runs" }),
  BOT_LEASE_SECONDS: Int(1, 86400, 300, "how long a worker holds the items it claimed before another may take them over"),
  BOT_MAX_ATTEMPTS: Int(1, 100, 5, "transient failures before an item fails with AUTHORITY_UNAVAILABLE"),
  BOT_CONCURRENCY: Int(1, 256, 8, "companies a bot pass takes batches up from at once (the store round trips before filing)"),
  BOT_CLAIM_SIZE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: "items a worker claims from the filing queue at a time; default AUTHORITY_MAX_CONCURRENCY" })),
  BOT_RETRY_BASE_MS: Int(1, 86_400_000, 30_000, "first retry delay after a transient authority failure (doubles per attempt, jittered)"),
  BOT_RETRY_MAX_MS: Int(1, 86_400_000, 1_800_000, "longest retry delay between two authority attempts"),
  AUTHORITY_URL: Type.Optional(Type.String({ pattern: "^https?://.+", description: "authority adapter endpoint; unset = built-in simulator" })),
  AUTHORITY_TIMEOUT_MS: Int(1, 600_000, 10_000, "how long one authority call may take before it counts as a transient failure"),
  AUTHORITY_ABANDON_MS: Int(1, 3_600_000, 60_000, "how long a call that timed out keeps its connection, and its share of the authority's capacity, for the late answer (at least AUTHORITY_TIMEOUT_MS)"),
  AUTHORITY_SIM_HOST: Type.String({ minLength: 1, default: "127.0.0.1", description: "where `npm run authority-sim` listens" }),
  AUTHORITY_SIM_PORT: Int(0, 65535, 8090, "port of `npm run authority-sim` (the built-in simulator always takes a free loopback port)"),
  AUTHORITY_SIM_LATENCY_MS: Int(0, 600_000, 0, "simulator: delay before each answer"),
  AUTHORITY_SIM_ERROR_RATE: Type.Number({ minimum: 0, maximum: 1, default: 0, description: "simulator: share of calls answered 500 (0–1)" }),
  AUTHORITY_SIM_OUTAGE: Type.Boolean({ default: false, description: "simulator: answer every call 503" }),
  AUTHORITY_SIM_DECISION_DELAY_MS: Int(0, 86_400_000, 0, "simulator: how long after submit a status request still answers pending"),
  AUTHORITY_MAX_CONCURRENCY: Int(1, 1024, 8, "authority calls in flight at once, all worker processes together"),
  AUTHORITY_MAX_RPS: Int(0, 100_000, 20, "authority calls per second, all worker processes together; 0 = no limit"),
  AUTHORITY_BREAKER_FAILURES: Int(1, 10_000, 5, "transient authority failures in a row that open the circuit breaker"),
  AUTHORITY_BREAKER_SECONDS: Int(1, 86_400, 60, "how long an open breaker makes the bot leave the authority alone before one probe call"),
  BOT_POLL_SECONDS: Int(1, 86_400, 5, "first wait before asking the authority again about a submitted item (doubles, at most 5 minutes)"),
  CHANGE_CUTOFF_HOURS: Int(0, 8760, 12, "hours before the transport (exportDate) after which a document can no longer be changed (SPEC §15)"),
  CONSOLE_TZ: Type.String({ minLength: 1, default: "Europe/Amsterdam", description: "time zone the console shows times in (an IANA name; the operator API keeps UTC)" }),
  ...OIDC_ENV,
  DEADLINE_TZ: Type.String({ minLength: 1, default: "Europe/Amsterdam", description: "time zone of the filing deadline's calendar and cutoff" }),
  DEADLINE_WORKING_DAYS: Int(0, 60, 2, "working days before the transport by which a document must be requested"),
  DEADLINE_HOLIDAYS: Type.String({ pattern: "^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$", default: "NL", description: "country (optionally -region) whose public holidays are not working days" }),
  DEADLINE_CUTOFF: Type.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", default: "12:00", description: "local time (HH:MM) on the last working day by which to request" }),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Boolean({ default: false, description: "allow webhook targets in private ranges" }),
  WEBHOOK_TIMEOUT_MS: Int(1, 600_000, 15_000, "how long one webhook delivery may take"),
  WEBHOOK_RETRY_BASE_MS: Int(1, 86_400_000, 10_000, "first webhook retry delay (doubles per attempt, jittered)"),
  WEBHOOK_RETRY_MAX_MS: Int(1, 86_400_000, 10_800_000, "longest delay between two webhook attempts"),
  WEBHOOK_RETRY_WINDOW_SECONDS: Int(1, 604_800, 86_400, "how long after the event a webhook is retried before it is given up"),
  WEBHOOK_POLL_INTERVAL_MS: Int(10, 3_600_000, 1000, "how often the dispatcher looks for due deliveries"),
  WEBHOOK_CONCURRENCY: Int(1, 256, 8, "webhook deliveries a worker makes at once"),
  WEBHOOK_COMPANY_MAX_IN_FLIGHT: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1024, description: "webhook deliveries one company may have in flight across all workers; default WEBHOOK_CONCURRENCY - 1, so a hanging receiver always leaves another company a slot" }),
  ),
  WEBHOOK_LEASE_SECONDS: Int(1, 86_400, 60, "how long a dispatcher holds a claimed delivery before another may take it"),
  EVENT_RETENTION_DAYS: Int(1, 3650, 30, "days an event stays in the event feed (GET /api/Events) before the worker's sweep deletes it"),
  ITEM_RETENTION_DAYS: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: 36_500,
      description: "days after its final status that a work item is erased with its history, follow-ups, events and deliveries by the worker's sweep (fractions allowed: 0.0001 is about 8.6 s); unset: kept",
    }),
  ),
  WEBHOOK_SECRET_OVERLAP_SECONDS: Int(0, 2_592_000, 86_400, "after `webhooks secret --rotate`, how long deliveries are signed with the previous secret too"),
  RATE_LIMIT_TENANT_RPS: Int(0, 1_000_000, 200, "per-company sustained requests per second; 0 turns it off"),
  RATE_LIMIT_TENANT_BURST: Int(0, 1_000_000, 400, "per-company burst size"),
  LOGIN_FAILURES_PER_MINUTE: Int(0, 1_000_000, 10, "failed logins per API key and per client address; 0 turns it off"),
  REDIS_URL: Type.Optional(Type.String({ pattern: "^rediss?://.+", description: "share rate-limit state across processes" })),
  TRUST_PROXY: Type.String({
    pattern: "^(false|(loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(/[0-9]{1,3})?)(,(loopback|linklocal|uniquelocal|[0-9a-fA-F.:]+(/[0-9]{1,3})?))*)$",
    default: "false",
    description: "whose X-Forwarded-For to believe for the client address: false (default; the socket peer) or the proxies' addresses/CIDRs (or loopback, uniquelocal) separated by commas",
  }),
  REQUEST_TIMEOUT_MS: Int(1000, 600_000, 30_000, "time a client has to send a whole request (headers and body)"),
  HEADERS_TIMEOUT_MS: Int(1000, 600_000, 10_000, "time a client has to send the request headers"),
  KEEP_ALIVE_TIMEOUT_MS: Int(1000, 600_000, 72_000, "how long an idle keep-alive connection stays open; above a load balancer's idle timeout"),
  CONNECTION_TIMEOUT_MS: Int(0, 3_600_000, 120_000, "a socket with no traffic at all for this long is closed; 0 turns it off"),
  MAX_HEADER_BYTES: Int(16_384, 1_048_576, 131_072, "largest request head (request line and headers) the server reads"),
  SHUTDOWN_TIMEOUT_MS: Int(1000, 600_000, 15_000, "on SIGTERM: how long in-flight requests and background work get before the process exits anyway"),
  METRICS_ENABLED: Type.Boolean({ default: true, description: "serve /metrics" }),
  LOG_LEVEL: Type.Union(
    ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
    { default: "info", description: "pino log level" },
  ),
  // OpenTelemetry's own variables (SPEC §17): the ones that decide whether and how traces are
  // exported are checked here; the SDK reads the rest itself (src/telemetry/tracing.ts).
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ minLength: 1, description: "OTLP/HTTP base URL (…/v1/traces is added); tracing is off unless this or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set" })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ minLength: 1, description: "OTLP/HTTP URL of the traces, used as given" })),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_SDK_DISABLED: Type.Boolean({ default: false, description: "true: no tracing, whatever else is set" }),
  OTEL_TRACES_EXPORTER: Type.Optional(Type.String({ description: "otlp (the default) or none" })),
});
export type Env = Static<typeof EnvSchema>;

export type { OidcSettings } from "./config-oidc.ts";

export type StoreLocation = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; poolSize?: number };

export interface Config {
  port: number;
  host: string;
  role: Env["ROLE"];
  store: StoreLocation;
  jwtSecret: string | undefined;
  /** Key text of the encryption at rest; undefined = generated and kept by the store, like jwtSecret. */
  dataEncryptionKey: string | undefined;
  jwtIssuer: string;
  jwtAudience: string;
  tokenTtlSeconds: number;
  timeZone: string;
  /** The time zone of every time on a console page (SPEC §16). */
  consoleTimeZone: string;
  /** Console sign-in through the company's identity provider (SPEC §19); undefined: passwords only. */
  oidc: OidcSettings | undefined;
  /** CONSOLE_PASSWORD_SIGNIN: false hides and refuses the console's password sign-in. */
  consolePasswordSignIn: boolean;
  batchMaxItems: number;
  maxBodyBytes: number;
  /** Body limit of the bulk add (SPEC §11.1). */
  maxBulkBodyBytes: number;
  botSchedule: string;
  botLeaseSeconds: number;
  botMaxAttempts: number;
  botConcurrency: number;
  /** Items a worker claims from the filing queue at a time (SPEC §14). */
  botClaimSize: number;
  botRetryBaseMs: number;
  botRetryMaxMs: number;
  authorityUrl: string | undefined;
  authorityTimeoutMs: number;
  authorityAbandonMs: number;
  authorityMaxConcurrency: number;
  /** 0 = no limit. */
  authorityMaxRps: number;
  authorityBreakerFailures: number;
  authorityBreakerSeconds: number;
  botPollSeconds: number;
  /** When an item must be filed (SPEC §10). */
  deadline: DeadlineRule;
  /** CHANGE_CUTOFF_HOURS in milliseconds. */
  changeCutoffMs: number;
  /** Settings of the authority simulator, standalone or built in. */
  authoritySim: AuthoritySimSettings;
  webhookAllowPrivateNetworks: boolean;
  /** MIGRATE_ON_START: apply pending migrations at start; false: refuse to start while one is pending. */
  migrateOnStart: boolean;
  webhookTimeoutMs: number;
  webhookRetryBaseMs: number;
  webhookRetryMaxMs: number;
  webhookRetryWindowSeconds: number;
  webhookPollIntervalMs: number;
  webhookConcurrency: number;
  webhookCompanyMaxInFlight: number;
  webhookLeaseSeconds: number;
  /** How long the event feed keeps an event (SPEC §13). */
  eventRetentionDays: number;
  /** How long after its final status an item is kept (SPEC §22); undefined: for good. */
  itemRetentionDays: number | undefined;
  webhookSecretOverlapSeconds: number;
  rateLimitTenantRps: number;
  rateLimitTenantBurst: number;
  loginFailuresPerMinute: number;
  redisUrl: string | undefined;
  /** Fastify's trustProxy: false, or the trusted proxies' addresses/CIDRs, comma-separated. */
  trustProxy: false | string;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  connectionTimeoutMs: number;
  maxHeaderBytes: number;
  shutdownTimeoutMs: number;
  metricsEnabled: boolean;
  logLevel: Env["LOG_LEVEL"];
  /** Undefined: tracing is off. */
  tracing: TracingSettings | undefined;
}


export interface AuthoritySimSettings {
  host: string;
  port: number;
  latencyMs: number;
  /** 0–1: share of calls answered 500 before anything is registered. */
  errorRate: number;
  /** Every call answered 503. */
  outage: boolean;
  /** How long after submit a status request still answers pending. */
  decisionDelayMs: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

type EnvSource = Record<string, string | undefined>;

/** Parses the environment; throws a one-line `ConfigError` naming the first bad variable. */
export function loadConfig(source: EnvSource = process.env, overrides: Partial<EnvSource> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const value = overrides[name] ?? source[name];
    if (value !== undefined && value !== "") raw[name] = value;
  }
  // Value.Default below fills the defaults into `raw` itself.
  const given = new Set(Object.keys(raw));
  // TypeBox converts "2.5" to the integer 2: a whole number must be written as one.
  for (const [name, value] of Object.entries(raw)) {
    const schema = (EnvSchema.properties as Record<string, { type?: string; description?: string }>)[name];
    if (schema?.type === "integer" && typeof value === "string" && !/^\s*[+-]?\d+\s*$/.test(value)) {
      throw new ConfigError(`${name}: Expected integer (got ${JSON.stringify(value)}); expected ${schema.description}`);
    }
  }
  const defaulted = Value.Default(EnvSchema, raw) as Record<string, unknown>;
  const converted = Value.Convert(EnvSchema, defaulted) as Record<string, unknown>;
  const firstError = Value.Errors(EnvSchema, converted).First();
  if (firstError) {
    const name = firstError.path.replace(/^\//, "").split("/")[0] || "environment";
    const shown = given.has(name) ? ` (got ${JSON.stringify(raw[name])})` : "";
    const described = (EnvSchema.properties as Record<string, { description?: string }>)[name]?.description;
    throw new ConfigError(`${name}: ${firstError.message}${shown}${described ? `; expected ${described}` : ""}`);
  }
  const env = converted as Env;
  checkTimeZone("TZ", env.TZ);
  checkTimeZone("DEADLINE_TZ", env.DEADLINE_TZ);
  checkTimeZone("CONSOLE_TZ", env.CONSOLE_TZ);
  // Only a calendar someone named can be a typo; the default is one date-holidays has (a test
  // holds it), and not loading the library here keeps it out of every CLI call.
  if (given.has("DEADLINE_HOLIDAYS")) checkHolidays(env.DEADLINE_HOLIDAYS);
  checkCron(env.BOT_SCHEDULE);
  checkLeaseOutlastsCall("BOT_LEASE_SECONDS", env.BOT_LEASE_SECONDS, "AUTHORITY_TIMEOUT_MS", env.AUTHORITY_TIMEOUT_MS);
  checkLeaseOutlastsCall("WEBHOOK_LEASE_SECONDS", env.WEBHOOK_LEASE_SECONDS, "WEBHOOK_TIMEOUT_MS", env.WEBHOOK_TIMEOUT_MS);
  if (given.has("AUTHORITY_ABANDON_MS") && env.AUTHORITY_ABANDON_MS < env.AUTHORITY_TIMEOUT_MS) {
    throw new ConfigError(`AUTHORITY_ABANDON_MS: ${env.AUTHORITY_ABANDON_MS} ms must be at least AUTHORITY_TIMEOUT_MS (${env.AUTHORITY_TIMEOUT_MS} ms)`);
  }
  const oidc = readOidcSettings(env, given);
  if (oidc && "problem" in oidc) throw new ConfigError(oidc.problem);
  const store = parseStoreLocation(env.DATABASE_URL, env.DATABASE_POOL_SIZE);
  return Object.freeze({
    port: env.PORT,
    host: env.HOST,
    role: env.ROLE,
    store,
    jwtSecret: env.JWT_SECRET,
    dataEncryptionKey: env.DATA_ENCRYPTION_KEY,
    jwtIssuer: env.JWT_ISSUER,
    jwtAudience: env.JWT_AUDIENCE,
    tokenTtlSeconds: env.TOKEN_TTL_SECONDS,
    timeZone: env.TZ,
    consoleTimeZone: env.CONSOLE_TZ,
    oidc: oidc && Object.freeze(oidc),
    consolePasswordSignIn: env.CONSOLE_PASSWORD_SIGNIN,
    batchMaxItems: env.BATCH_MAX_ITEMS,
    maxBodyBytes: env.MAX_BODY_BYTES,
    maxBulkBodyBytes: env.MAX_BULK_BODY_BYTES,
    botSchedule: env.BOT_SCHEDULE,
    botLeaseSeconds: env.BOT_LEASE_SECONDS,
    botMaxAttempts: env.BOT_MAX_ATTEMPTS,
    botConcurrency: env.BOT_CONCURRENCY,
    botClaimSize: env.BOT_CLAIM_SIZE ?? env.AUTHORITY_MAX_CONCURRENCY,
    botRetryBaseMs: env.BOT_RETRY_BASE_MS,
    botRetryMaxMs: Math.max(env.BOT_RETRY_MAX_MS, env.BOT_RETRY_BASE_MS),
    authorityUrl: env.AUTHORITY_URL,
    authorityTimeoutMs: env.AUTHORITY_TIMEOUT_MS,
    // Left at its default, it follows a longer AUTHORITY_TIMEOUT_MS.
    authorityAbandonMs: Math.max(env.AUTHORITY_ABANDON_MS, env.AUTHORITY_TIMEOUT_MS),
    authorityMaxConcurrency: env.AUTHORITY_MAX_CONCURRENCY,
    authorityMaxRps: env.AUTHORITY_MAX_RPS,
    authorityBreakerFailures: env.AUTHORITY_BREAKER_FAILURES,
    authorityBreakerSeconds: env.AUTHORITY_BREAKER_SECONDS,
    botPollSeconds: env.BOT_POLL_SECONDS,
    changeCutoffMs: env.CHANGE_CUTOFF_HOURS * 3_600_000,
    deadline: Object.freeze({ timeZone: env.DEADLINE_TZ, workingDays: env.DEADLINE_WORKING_DAYS, holidays: env.DEADLINE_HOLIDAYS.toUpperCase(), cutoff: env.DEADLINE_CUTOFF }),
    authoritySim: Object.freeze({
      host: env.AUTHORITY_SIM_HOST,
      port: env.AUTHORITY_SIM_PORT,
      latencyMs: env.AUTHORITY_SIM_LATENCY_MS,
      errorRate: env.AUTHORITY_SIM_ERROR_RATE,
      outage: env.AUTHORITY_SIM_OUTAGE,
      decisionDelayMs: env.AUTHORITY_SIM_DECISION_DELAY_MS,
    }),
    webhookAllowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    migrateOnStart: env.MIGRATE_ON_START,
    webhookTimeoutMs: env.WEBHOOK_TIMEOUT_MS,
    webhookRetryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    webhookRetryMaxMs: Math.max(env.WEBHOOK_RETRY_MAX_MS, env.WEBHOOK_RETRY_BASE_MS),
    webhookRetryWindowSeconds: env.WEBHOOK_RETRY_WINDOW_SECONDS,
    webhookPollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
    webhookConcurrency: env.WEBHOOK_CONCURRENCY,
    webhookCompanyMaxInFlight: env.WEBHOOK_COMPANY_MAX_IN_FLIGHT ?? Math.max(1, env.WEBHOOK_CONCURRENCY - 1),
    webhookLeaseSeconds: env.WEBHOOK_LEASE_SECONDS,
    eventRetentionDays: env.EVENT_RETENTION_DAYS,
    itemRetentionDays: env.ITEM_RETENTION_DAYS,
    webhookSecretOverlapSeconds: env.WEBHOOK_SECRET_OVERLAP_SECONDS,
    rateLimitTenantRps: env.RATE_LIMIT_TENANT_RPS,
    rateLimitTenantBurst: env.RATE_LIMIT_TENANT_BURST,
    loginFailuresPerMinute: env.LOGIN_FAILURES_PER_MINUTE,
    redisUrl: env.REDIS_URL,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeoutMs: env.CONNECTION_TIMEOUT_MS,
    maxHeaderBytes: env.MAX_HEADER_BYTES,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    metricsEnabled: env.METRICS_ENABLED,
    logLevel: env.LOG_LEVEL,
    tracing: tracingSettings(env),
  });
}

function parseStoreLocation(url: string, poolSize: number): StoreLocation {
  if (url.startsWith("sqlite:")) return { kind: "sqlite", path: resolve(url.slice("sqlite:".length)) };
  return { kind: "postgres", url, poolSize };
}

/**
 * Trusting X-Forwarded-For from anyone would let every client pick its own address and walk
 * around the per-address login limit, so the default believes only the socket peer. Trusting
 * every hop ("true") or a bare hop count is not offered: name the proxies instead.
 */
function parseTrustProxy(value: string): false | string {
  return value === "false" ? false : value;
}

function checkTimeZone(name: string, timeZone: string): void {
  try {
    new Intl.DateTimeFormat("en-GB", { timeZone });
  } catch {
    throw new ConfigError(`${name}: unknown time zone ${JSON.stringify(timeZone)}; expected an IANA name such as UTC or Europe/Amsterdam`);
  }
}

function checkHolidays(country: string): void {
  if (!knowsHolidays(country)) {
    throw new ConfigError(`DEADLINE_HOLIDAYS: no public holiday calendar for ${JSON.stringify(country)}; expected a country code such as NL, optionally with a region (DE-BY)`);
  }
}

/** A lease shorter than one call would let a second worker take over work still in flight. */
function checkLeaseOutlastsCall(leaseName: string, leaseSeconds: number, timeoutName: string, timeoutMs: number): void {
  if (leaseSeconds * 1000 <= timeoutMs) {
    throw new ConfigError(`${leaseName}: ${leaseSeconds} s must be longer than ${timeoutName} (${timeoutMs} ms), or work in flight could be taken over`);
  }
}

function checkCron(expression: string): void {
  try {
    new Cron(expression, { paused: true }).stop();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`BOT_SCHEDULE: ${JSON.stringify(expression)} is not a cron expression (${reason}); expected e.g. "* * * * *"`);
  }
}

/** On when an OTLP endpoint is set and nothing switches the SDK off; endpoints must be URLs. */
function tracingSettings(env: Env): TracingSettings | undefined {
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] as const) {
    const url = env[name];
    if (url !== undefined && !/^https?:\/\//.test(url)) throw new ConfigError(`${name}: ${JSON.stringify(url)} is not an http(s) URL; expected e.g. http://127.0.0.1:4318`);
  }
  const exporter = env.OTEL_TRACES_EXPORTER?.trim() || "otlp";
  if (exporter !== "otlp" && exporter !== "none") throw new ConfigError(`OTEL_TRACES_EXPORTER: ${JSON.stringify(exporter)} is not supported; expected otlp or none`);
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || env.OTEL_SDK_DISABLED || exporter === "none") return undefined;
  return { protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf" };
}
