/**
 * The webhook dispatcher (SPEC §6, §11.3): claims due outbox rows with a lease, delivers each
 * signed event, and records every attempt (when, the answer or error, how long it took). Any
 * non-2xx answer, timeout or network error is retried with the shared backoff until the retry
 * window (24 h) is over; a target the address guard refuses is not retried. Rows survive
 * restarts: a dispatcher that dies leaves its claims to expire.
 */
import type { Config } from "../config.ts";
import { nextAttemptAt, type BackoffPolicy } from "../lib/backoff.ts";
import { DataDecryptionError } from "../lib/data-encryption.ts";
import type { Store, WebhookAttemptOutcome, WebhookDelivery } from "../store/store.ts";
import { checkWebhookTarget, DNS_LOOKUP_TIMEOUT_MS, type Lookup } from "./address-guard.ts";
import { createWebhookSecrets, type WebhookSecrets } from "./secrets.ts";
import { sendWebhook } from "./sender.ts";
import { inSpan, SpanKind, type Span, type SpanOptions } from "../telemetry/spans.ts";
import { signEvent } from "./signing.ts";

export interface DeliveryReport {
  companyId: number;
  deliveryId: number;
  eventId: string;
  workItemId: number;
  outcome: WebhookAttemptOutcome["kind"];
  httpStatus: number | null;
  error: string | null;
}

export interface DeliverySummary {
  delivered: number;
  retried: number;
  failed: number;
  deliveries: DeliveryReport[];
}

/** Optional hooks, e.g. for metrics; they must not throw. */
export interface WebhookEvents {
  deliveryAttempted?(report: DeliveryReport & { durationMs: number }): void;
}

export type DispatcherConfig = Pick<
  Config,
  | "webhookAllowPrivateNetworks"
  | "webhookTimeoutMs"
  | "webhookRetryBaseMs"
  | "webhookRetryMaxMs"
  | "webhookRetryWindowSeconds"
  | "webhookPollIntervalMs"
  | "webhookConcurrency"
  | "webhookCompanyMaxInFlight"
  | "webhookLeaseSeconds"
  | "webhookSecretOverlapSeconds"
  | "dataEncryptionKey"
>;

export interface DispatcherDeps {
  store: Store;
  config: DispatcherConfig;
  /** This process's worker id; it owns the rows it claims. */
  owner: string;
  clock?: () => Date;
  random?: () => number;
  /** The companies' signing secrets; made from the store and config when not given. */
  secrets?: WebhookSecrets;
  /** DNS override (tests); the system resolver otherwise. */
  lookup?: Lookup;
  logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  events?: WebhookEvents;
}

export interface Dispatcher {
  /** One pass: claims what is due now (as many as there are free slots), delivers it, records every attempt. */
  deliverDue(): Promise<DeliverySummary>;
  /** Delivers until stop(): claims whenever a slot frees, on wake() and every WEBHOOK_POLL_INTERVAL_MS. */
  start(): void;
  /** Looks for due deliveries now instead of at the next poll (e.g. right after the bot recorded an outcome). */
  wake(): void;
  /** Final: stops polling, aborts deliveries in flight (they are retried later) and waits for the pass. */
  stop(): Promise<void>;
}

/** Time a delivery's attempt may take beyond the receiver's timeout: the store's reads and writes around it. */
const LEASE_MARGIN_MS = 10_000;

/**
 * How long a claim holds its rows. Every claimed row starts at once (a claim takes no more than
 * the free slots), so an attempt is the address check plus the request plus the margin; the
 * lease outlives that even when WEBHOOK_LEASE_SECONDS is set close to WEBHOOK_TIMEOUT_MS.
 */
export const deliveryLeaseMs = (config: Pick<Config, "webhookLeaseSeconds" | "webhookTimeoutMs">) =>
  Math.max(config.webhookLeaseSeconds * 1000, DNS_LOOKUP_TIMEOUT_MS + config.webhookTimeoutMs + LEASE_MARGIN_MS);

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { store, config, owner } = deps;
  const clock = deps.clock ?? (() => new Date());
  const policy: BackoffPolicy = { baseMs: config.webhookRetryBaseMs, maxMs: config.webhookRetryMaxMs };
  const slots = config.webhookConcurrency;
  const leaseMs = deliveryLeaseMs(config);
  const secrets = deps.secrets ?? createWebhookSecrets(store, config);
  // stop() aborts deliveries in flight; they are recorded as failed attempts and retried later.
  const stopping = new AbortController();
  /** Deliveries this process has claimed and not yet recorded. */
  const inFlight = new Set<Promise<void>>();

  async function attempt(delivery: WebhookDelivery, span: Span): Promise<{ outcome: WebhookAttemptOutcome; report: DeliveryReport; at: string; durationMs: number }> {
    const at = clock();
    const started = performance.now();
    const failed = (error: string, httpStatus: number | null = null): WebhookAttemptOutcome => {
      const now = clock();
      const windowOver = now.getTime() - Date.parse(delivery.createdAt) >= config.webhookRetryWindowSeconds * 1000;
      if (windowOver) return { kind: "failed", error: `gave up after ${delivery.attempts + 1} attempts: ${error}`, httpStatus };
      return { kind: "retried", error, httpStatus, nextAttemptAt: nextAttemptAt(now, delivery.attempts + 1, policy, deps.random) };
    };
    let outcome: WebhookAttemptOutcome;
    const item = await store.getWorkItem(delivery.companyId, delivery.workItemId);
    // Signed with what is valid now: during a rotation's overlap, the previous secret too.
    let signingSecrets: string[] | undefined;
    let unreadable: string | undefined;
    try {
      signingSecrets = await secrets.signingSecrets(delivery.companyId, at);
    } catch (error) {
      if (!(error instanceof DataDecryptionError)) throw error;
      unreadable = error.message;
    }
    if (unreadable !== undefined) {
      // Data, not a crash: the attempt is listed with why, and retried (the key may be put right).
      outcome = failed(`the company's webhook secret cannot be read: ${unreadable}`);
    } else if (!item || !signingSecrets) {
      outcome = { kind: "failed", error: "the work item or its company no longer exists", httpStatus: null };
    } else {
      const target = await checkWebhookTarget(delivery.url, { allowPrivateNetworks: config.webhookAllowPrivateNetworks, ...(deps.lookup ? { lookup: deps.lookup } : {}) });
      if (target.kind === "refused") {
        outcome = { kind: "failed", error: `refused: ${target.reason}`, httpStatus: null };
      } else if (target.kind === "unresolved") {
        outcome = failed(target.reason);
      } else {
        const signed = signEvent({ type: delivery.eventType, timestamp: delivery.createdAt, data: item }, delivery.eventId, signingSecrets, clock());
        try {
          const { httpStatus } = await sendWebhook(delivery.url, target.addresses[0]!, signed, config.webhookTimeoutMs, { stop: stopping.signal, span });
          outcome = httpStatus >= 200 && httpStatus < 300 ? { kind: "delivered", httpStatus } : failed(`the receiver answered ${httpStatus}`, httpStatus);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          outcome = failed(`no answer: ${typeof code === "string" ? `${code} ` : ""}${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    const httpStatus = outcome.httpStatus;
    return {
      outcome,
      at: at.toISOString(),
      durationMs: performance.now() - started,
      report: {
        companyId: delivery.companyId,
        deliveryId: delivery.deliveryId,
        eventId: delivery.eventId,
        workItemId: delivery.workItemId,
        outcome: outcome.kind,
        httpStatus,
        error: outcome.kind === "delivered" ? null : outcome.error,
      },
    };
  }

  /** Claims up to `limit` due deliveries, companies taking turns, none beyond its cap in flight. */
  async function claim(limit: number): Promise<WebhookDelivery[]> {
    if (limit <= 0) return [];
    const now = clock().toISOString();
    const leaseExpiresAt = new Date(Date.parse(now) + leaseMs).toISOString();
    return store.claimDueWebhookDeliveries({ owner, now, leaseExpiresAt, limit, maxInFlight: config.webhookCompanyMaxInFlight });
  }

  /** Attempts and records one claimed delivery; never throws. */
  async function deliver(delivery: WebhookDelivery, summary?: DeliverySummary): Promise<void> {
    try {
      const { outcome, report, at, durationMs } = await inSpan("webhook delivery", deliverySpan(delivery), async (span) => {
        const tried = await attempt(delivery, span);
        span.setAttribute("work_item_api.webhook.outcome", tried.outcome.kind);
        return tried;
      });
      if (!(await store.recordWebhookAttempt(delivery, owner, outcome, { at, durationMs }))) return;
      if (summary) {
        summary[report.outcome] += 1;
        summary.deliveries.push(report);
      }
      if (report.outcome === "failed") deps.logger?.warn({ eventId: report.eventId, companyId: report.companyId, error: report.error }, "webhook given up");
      deps.events?.deliveryAttempted?.({ ...report, durationMs });
    } catch (error) {
      // The row stays claimed until its lease ends, then it is tried again: nothing is lost.
      deps.logger?.error({ err: error, eventId: delivery.eventId }, "webhook delivery could not be recorded");
    }
  }

  /** Starts a claimed delivery in a slot; when it ends, the slot is offered again. */
  function startInSlot(delivery: WebhookDelivery, summary?: DeliverySummary, then?: () => void): Promise<void> {
    const running: Promise<void> = deliver(delivery, summary).finally(() => {
      inFlight.delete(running);
      then?.();
    });
    inFlight.add(running);
    return running;
  }

  async function deliverDue(): Promise<DeliverySummary> {
    const summary: DeliverySummary = { delivered: 0, retried: 0, failed: 0, deliveries: [] };
    const claimed = await claim(slots - inFlight.size);
    await Promise.all(claimed.map((delivery) => startInSlot(delivery, summary)));
    return summary;
  }

  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let filling: Promise<void> | undefined;
  let fillAgain = false;

  /**
   * Fills the free slots and returns; each delivery, when it ends, calls fill again. A slow
   * receiver holds its own slot only, never the claim of the others.
   */
  function fill(): void {
    if (stopped) return;
    if (filling) {
      fillAgain = true;
      return;
    }
    filling = (async () => {
      do {
        fillAgain = false;
        const claimed = await claim(slots - inFlight.size);
        for (const delivery of claimed) void startInSlot(delivery, undefined, fill);
      } while (fillAgain && !stopped);
    })()
      .catch((error: unknown) => deps.logger?.error({ err: error }, "webhook claim failed; retrying at the next poll"))
      .finally(() => {
        filling = undefined;
      });
  }

  const poll = () => {
    fill();
    if (!stopped) timer = setTimeout(poll, config.webhookPollIntervalMs);
  };

  return {
    deliverDue,
    start() {
      stopped = false;
      poll();
    },
    wake() {
      fill();
    },
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      timer = undefined;
      await filling;
      await Promise.all([...inFlight]);
    },
  };
}

/** A delivery attempt is a client span of its item's trace (SPEC §17), named by its delivery and event. */
function deliverySpan(delivery: WebhookDelivery): SpanOptions {
  return {
    kind: SpanKind.CLIENT,
    traceParent: delivery.traceParent,
    attributes: {
      "work_item_api.company_id": delivery.companyId,
      "work_item_api.work_item_id": delivery.workItemId,
      "work_item_api.webhook.delivery_id": delivery.deliveryId,
      "work_item_api.webhook.event_id": delivery.eventId,
      "work_item_api.webhook.event_type": delivery.eventType,
      "work_item_api.webhook.attempt": delivery.attempts + 1,
    },
  };
}
