/**
 * Prometheus metrics (prom-client). Every app instance owns its own registry, so several apps in
 * one process (the tests) never share or collide on counters. The API, the bot and the webhook
 * dispatcher record into the same `Metrics` object; names all start with `work_item_api_`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { RequestDurationHistogram } from "./request-duration-histogram.ts";
import type { ItemOutcome, WebhookAttemptOutcome } from "./store/store.ts";

export const METRIC_PREFIX = "work_item_api_";

/** How one bot run ended. */
export type BotRunOutcome = "completed" | "failed";
/** What the bot recorded for one item after talking to the authority (SPEC §5). */
export type BotItemOutcome = ItemOutcome["kind"];
/** How one webhook delivery attempt ended (see WebhookAttemptOutcome). */
export type WebhookDeliveryOutcome = WebhookAttemptOutcome["kind"];

/** A count read from the store on every scrape (the outbox backlog, the overdue items). */
export type StoreCountSource = () => number | Promise<number>;
/** The number of outbox rows still to deliver. */
export type BacklogSource = StoreCountSource;
/** Seconds between the bot's scheduled passes around now (BOT_SCHEDULE); read on every scrape. */
export type ScheduleIntervalSource = () => number;

export const BREAKER_STATES = ["closed", "open", "halfOpen"] as const;
/** The authority circuit breaker's state as this process sees it; read on every scrape. */
export type BreakerStateSource = () => (typeof BREAKER_STATES)[number];
/** Why the breaker is open when the authority refused our calls themselves; null otherwise. */
export type BreakerReasonSource = () => string | null;

export interface MetricsOptions {
  /** Also collect process_* and nodejs_* metrics (the server does; test apps need not). */
  defaultMetrics?: boolean;
  outboxBacklog?: BacklogSource;
}

/** The metric objects, plus small typed recorders for the bot and the dispatcher. */
export interface Metrics {
  readonly registry: Registry;
  /** Labels: method, route (the pattern), status_code. */
  readonly httpRequestDuration: RequestDurationHistogram;
  readonly workItemsCreated: Counter<"work_type">;
  readonly tokensIssued: Counter;
  /** Labels: surface (api, console), outcome (succeeded, failed, refused). */
  readonly signInAttempts: Counter<"surface" | "outcome">;
  readonly botRuns: Counter<"outcome">;
  readonly botLastLap: Gauge;
  readonly botItemOutcomes: Counter<"outcome">;
  readonly webhookDeliveries: Counter<"outcome">;
  readonly outboxBacklog: Gauge;
  readonly itemsOverdue: Gauge;
  readonly storeShardGroupsUnreachable: Gauge;
  readonly botScheduleInterval: Gauge;
  readonly authorityBreakerState: Gauge<"state">;
  readonly authorityRefusing: Gauge;
  /** Labels: timing (on_time, late; items without a deadline are not counted). */
  readonly submitsByDeadline: Counter<"timing">;
  readonly submitSlack: Histogram;
  recordBotRun(outcome: BotRunOutcome): void;
  /** The bot ended a pass, or a lap of a pass that goes on (`finishedAt`, ISO). */
  recordBotLap(finishedAt: string): void;
  /** An item filed: on time or late against its deadline, and by how much (SPEC §14). */
  recordSubmit(info: { deadlineAt: string | null; submittedAt: string }): void;
  recordBotItem(outcome: BotItemOutcome, count?: number): void;
  recordWebhookDelivery(outcome: WebhookDeliveryOutcome): void;
  /** Where the outbox backlog gauge reads from; the outbox lives with the webhook dispatcher. */
  setOutboxBacklogSource(source: BacklogSource | undefined): void;
  /** Where the overdue gauge reads from: the store, whatever the process's role. */
  setItemsOverdueSource(source: StoreCountSource | undefined): void;
  /** Where the unreachable shard groups gauge reads from: the store (SPEC §23). */
  setShardGroupsUnreachableSource(source: StoreCountSource | undefined): void;
  /** Where the schedule interval gauge reads from; the schedule lives with the bot. */
  setScheduleIntervalSource(source: ScheduleIntervalSource | undefined): void;
  /** Where the breaker gauge reads from; the breaker lives with the bot. */
  setBreakerStateSource(source: BreakerStateSource | undefined, reason?: BreakerReasonSource): void;
  /** The exposition text and its content type, for GET /metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  let backlogSource = options.outboxBacklog;
  let overdueSource: StoreCountSource | undefined;
  let shardGroupsSource: StoreCountSource | undefined;
  let scheduleIntervalSource: ScheduleIntervalSource | undefined;
  let breakerSource: BreakerStateSource | undefined;
  let breakerReasonSource: BreakerReasonSource | undefined;

  const httpRequestDuration = new RequestDurationHistogram(
    `${METRIC_PREFIX}http_request_duration_seconds`,
    "HTTP request duration by method, route pattern and status code",
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  const workItemsCreated = new Counter({
    name: `${METRIC_PREFIX}work_items_created_total`,
    help: "Work items stored (idempotent replays are not counted)",
    labelNames: ["work_type"] as const,
    registers: [registry],
  });
  const tokensIssued = new Counter({
    name: `${METRIC_PREFIX}tokens_issued_total`,
    help: "Bearer tokens issued by POST /api/Login/Authenticate",
    registers: [registry],
  });
  const signInAttempts = new Counter({
    name: `${METRIC_PREFIX}sign_in_attempts_total`,
    help: "API logins and console sign-ins by outcome: succeeded, failed (secret or password checked and wrong) and refused (429 before any check)",
    labelNames: ["surface", "outcome"] as const,
    registers: [registry],
  });
  const botRuns = new Counter({
    name: `${METRIC_PREFIX}bot_runs_total`,
    help: "Bot runs by outcome (completed, failed)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  // A pass under steady load goes on for hours and is counted in bot_runs_total only when it
  // ends; this says the bot is alive meanwhile.
  const botLastLap = new Gauge({
    name: `${METRIC_PREFIX}bot_last_lap_timestamp_seconds`,
    help: "When this process's bot last ended a pass, or a minute's lap of a pass that goes on (Unix time, seconds; 0 before the first)",
    registers: [registry],
  });
  const botItemOutcomes = new Counter({
    name: `${METRIC_PREFIX}bot_item_outcomes_total`,
    help: "What the bot recorded for an item after an authority call, by outcome (submitted, pending, succeeded, failed, retried)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: `${METRIC_PREFIX}webhook_deliveries_total`,
    help: "Webhook delivery attempts by outcome (delivered, retried, failed)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const outboxBacklog = storeCountGauge(registry, "outbox_backlog", "Webhook deliveries waiting in the outbox", () => backlogSource);
  const itemsOverdue = storeCountGauge(registry, "items_overdue", "New items (not yet filed) whose deadline has passed, over all companies", () => overdueSource);
  const storeShardGroupsUnreachable = storeCountGauge(
    registry,
    "store_shard_groups_unreachable",
    "Shard groups of a Citus store whose node the last read across companies could not reach; their companies' filing waits (0 on one PostgreSQL or SQLite)",
    () => shardGroupsSource,
  );
  // The bot-lap alert compares the last lap's age with this, so it holds for any BOT_SCHEDULE
  // (a schedule that sleeps at night has long intervals then).
  const botScheduleInterval = new Gauge({
    name: `${METRIC_PREFIX}bot_schedule_interval_seconds`,
    help: "Seconds from the bot's last scheduled pass (BOT_SCHEDULE) to its next one; 0 on a process without the worker role",
    registers: [registry],
    collect() {
      if (scheduleIntervalSource) this.set(scheduleIntervalSource());
    },
  });
  const authorityBreakerState = new Gauge({
    name: `${METRIC_PREFIX}authority_breaker_state`,
    help: "The authority circuit breaker: 1 for its current state (closed, open, halfOpen), 0 for the others",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      if (!breakerSource) return;
      const current = breakerSource();
      for (const state of BREAKER_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });

  const authorityRefusing = new Gauge({
    name: `${METRIC_PREFIX}authority_refusing_calls`,
    help: "1 while filing is stopped because the authority refused our calls themselves (401, 403, 404, 405 at submit: check AUTHORITY_URL and the credentials), else 0",
    registers: [registry],
    collect() {
      if (!breakerReasonSource) return;
      this.set(breakerReasonSource() === null ? 0 : 1);
    },
  });

  const submitsByDeadline = new Counter({
    name: `${METRIC_PREFIX}bot_submits_total`,
    help: "Items filed with the authority, by timing against their deadline (on_time, late)",
    labelNames: ["timing"] as const,
    registers: [registry],
  });
  const submitSlack = new Histogram({
    name: `${METRIC_PREFIX}bot_submit_slack_seconds`,
    help: "Deadline minus submit time of each filed item with a deadline (negative: late)",
    // From a day late to a week early: the crunch lives in the hours around the cutoff.
    buckets: [-86_400, -3600, -600, 0, 600, 3600, 7200, 4 * 3600, 12 * 3600, 86_400, 2 * 86_400, 7 * 86_400],
    registers: [registry],
  });

  return {
    registry,
    httpRequestDuration,
    workItemsCreated,
    tokensIssued,
    signInAttempts,
    botRuns,
    botLastLap,
    botItemOutcomes,
    webhookDeliveries,
    outboxBacklog,
    itemsOverdue,
    storeShardGroupsUnreachable,
    botScheduleInterval,
    authorityBreakerState,
    authorityRefusing,
    submitsByDeadline,
    submitSlack,
    recordBotRun: (outcome) => botRuns.inc({ outcome }),
    recordBotLap: (finishedAt) => botLastLap.set(Date.parse(finishedAt) / 1000),
    recordSubmit: ({ deadlineAt, submittedAt }) => {
      if (deadlineAt === null) return;
      const slackSeconds = (Date.parse(deadlineAt) - Date.parse(submittedAt)) / 1000;
      submitsByDeadline.inc({ timing: slackSeconds >= 0 ? "on_time" : "late" });
      submitSlack.observe(slackSeconds);
    },
    recordBotItem: (outcome, count = 1) => botItemOutcomes.inc({ outcome }, count),
    recordWebhookDelivery: (outcome) => webhookDeliveries.inc({ outcome }),
    setOutboxBacklogSource: (source) => {
      backlogSource = source;
    },
    setItemsOverdueSource: (source) => {
      overdueSource = source;
    },
    setShardGroupsUnreachableSource: (source) => {
      shardGroupsSource = source;
    },
    setScheduleIntervalSource: (source) => {
      scheduleIntervalSource = source;
    },
    setBreakerStateSource: (source, reason) => {
      breakerSource = source;
      breakerReasonSource = reason;
    },
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}

/** A gauge set from `source()` on every scrape, if there is one. */
function storeCountGauge(registry: Registry, name: string, help: string, source: () => StoreCountSource | undefined): Gauge {
  return new Gauge({
    name: `${METRIC_PREFIX}${name}`,
    help,
    registers: [registry],
    async collect() {
      const read = source();
      if (!read) return;
      try {
        this.set(await read());
      } catch {
        // A scrape must not fail because the store hiccups; the last value stays.
      }
    },
  });
}

/**
 * Event hooks for the bot (`BotEvents` of src/bot/run-once.ts) that record into `metrics`;
 * typed structurally, so the bot needs no import from here.
 */
export function botMetricsEvents(metrics: Metrics) {
  return {
    itemFinished: (info: { result: BotItemOutcome }) => metrics.recordBotItem(info.result),
    itemSubmitted: (info: { deadlineAt: string | null; submittedAt: string }) => metrics.recordSubmit(info),
    runFinished: (info: { error?: unknown }) => metrics.recordBotRun(info.error === undefined ? "completed" : "failed"),
    lapRecorded: (info: { finishedAt: string }) => metrics.recordBotLap(info.finishedAt),
  };
}

/** Event hooks for the webhook dispatcher (`WebhookEvents`) that record into `metrics`. */
export function webhookMetricsEvents(metrics: Metrics) {
  return {
    deliveryAttempted: (report: { outcome: WebhookDeliveryOutcome }) => metrics.recordWebhookDelivery(report.outcome),
  };
}
