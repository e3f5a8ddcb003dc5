/** The store's webhooks: the outbox, its delivery attempts and the companies' signing secrets. */
import type { WebhookEventType } from "../../domain/event-types.ts";

/** One outbox row claimed by a dispatcher. */
export interface WebhookDelivery {
  companyId: number;
  /** The delivery's own id (SPEC §11.3), what integrators name it by. */
  deliveryId: number;
  /** Stable per event: the `webhook-id` header, so receivers can deduplicate. */
  eventId: string;
  workItemId: number;
  eventType: WebhookEventType;
  url: string;
  /** Delivery attempts made before this one. */
  attempts: number;
  /** When the event happened: the item's terminal transition. */
  createdAt: string;
  /** The W3C trace context of the item's intake (SPEC §17): the delivery is a span of its trace. */
  traceParent: string | null;
}

export type WebhookAttemptOutcome =
  | { kind: "delivered"; httpStatus: number }
  | { kind: "retried"; nextAttemptAt: string; error: string; httpStatus: number | null }
  /** Given up (retry window over) or refused (address guard): no further attempts. */
  | { kind: "failed"; error: string; httpStatus: number | null };

/** One recorded delivery attempt: when it started and how long it took to answer or fail. */
export interface WebhookAttempt {
  at: string;
  /** The receiver's HTTP status; null when no answer came (or none was asked for). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** `pending`: still to be made (or being made); `delivered`: a 2xx came back; `failed`: given up. */
export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

/** A delivery as the integrator sees it (SPEC §11.3): the outbox row and every attempt so far. */
export interface WebhookDeliveryRecord {
  deliveryId: number;
  /** The `webhook-id` header of every attempt. */
  eventId: string;
  workItemId: number;
  type: WebhookEventType;
  url: string;
  status: WebhookDeliveryStatus;
  /** Oldest first. */
  attempts: WebhookAttempt[];
  /** When the next attempt is due; null once the delivery ended. */
  nextAttemptAt: string | null;
  createdAt: string;
}

export interface ListWebhookDeliveriesQuery {
  status?: WebhookDeliveryStatus;
  workItemId?: number;
  /** Only this delivery (a read of one). */
  deliveryId?: number;
  /** Keyset: only deliveries with a smaller id (newest first). */
  beforeDeliveryId?: number;
  limit: number;
}

/**
 * A company's webhook signing secrets as stored: opaque text (ciphertext, or `whsec_…` in rows
 * written before encryption at rest). `previous` still signs until `previousUntil`.
 */
export interface StoredWebhookSecrets {
  current: string | null;
  previous: string | null;
  previousUntil: string | null;
}

/** Webhooks (SPEC §6, §11.3). Secrets are opaque text here; src/webhooks/secrets.ts encrypts them. */
export interface WebhooksStore {
  /** The company's stored webhook secrets; undefined when the company does not exist. */
  getWebhookSecrets(companyId: number): Promise<StoredWebhookSecrets | undefined>;
  /**
   * The company's current webhook secret; stores `candidate` first when it has none (one atomic
   * `SET webhook_secret = COALESCE(webhook_secret, candidate)`), so concurrent first uses agree.
   * Undefined when the company does not exist.
   */
  ensureWebhookSecret(companyId: number, candidate: string): Promise<string | undefined>;
  /**
   * In one statement: the current secret becomes the previous one, valid until `previousUntil`
   * (none when null, or when there was no current secret), and `secret` the current one. False
   * when the company does not exist.
   */
  rotateWebhookSecret(companyId: number, input: { secret: string; previousUntil: string | null }): Promise<boolean>;
  /** Forgets the previous secret (ends the overlap now). False when the company does not exist. */
  revokePreviousWebhookSecret(companyId: number): Promise<boolean>;
  /**
   * Across companies, for encryption at rest: up to `limit` companies after `afterCompanyId`
   * holding a secret stored before it (text beginning with `whsec_`), in company order.
   */
  plaintextWebhookSecrets(input: { afterCompanyId: number; limit: number }): Promise<Array<{ companyId: number } & Pick<StoredWebhookSecrets, "current" | "previous">>>;
  /**
   * Replaces each stored secret that is still exactly `from` with `to` (compare-and-set, so a
   * rotation in between wins); a null pair leaves that secret alone.
   */
  replaceStoredWebhookSecrets(
    companyId: number,
    input: { current: { from: string; to: string } | null; previous: { from: string; to: string } | null },
  ): Promise<void>;
  /**
   * Up to `limit` companies with Pending outbox rows due at `now` and fewer than `maxInFlight`
   * deliveries in flight (claimed, lease not over): those with the fewest in flight first, then
   * the longest waiting, so companies take turns.
   */
  companiesWithDueDeliveries(input: { now: string; limit: number; maxInFlight: number }): Promise<number[]>;
  /**
   * Claims up to `limit` of the company's Pending outbox rows with next_attempt_at ≤ now, oldest
   * due first, and no more than leaves the company `maxInFlight` deliveries in flight: sets
   * lease_owner and pushes next_attempt_at to `leaseExpiresAt`, so a dispatcher that dies leaves
   * them due again later. Concurrent claimers never get the same row (the cap is read, not
   * locked: two claimers of one company at the same moment can each fill it).
   */
  claimWebhookDeliveries(input: { companyId: number; owner: string; now: string; leaseExpiresAt: string; limit: number; maxInFlight: number }): Promise<WebhookDelivery[]>;
  /**
   * The dispatcher's claim: up to `limit` due deliveries across companies, each company (in the
   * order of companiesWithDueDeliveries) taking an even share of what is left, under its cap.
   */
  claimDueWebhookDeliveries(input: { owner: string; now: string; leaseExpiresAt: string; limit: number; maxInFlight: number }): Promise<WebhookDelivery[]>;
  /**
   * In one transaction, records one delivery attempt: the outbox row (attempts + 1,
   * last_status, last_error; delivered → Delivered with delivered_at and ended_at; retried →
   * stays Pending with next_attempt_at; failed → Failed with ended_at = `attempt.at` +
   * duration), and the attempt's own row, numbered attempts + 1. Clears lease_owner. False
   * (nothing changed) when `owner` no longer holds the row.
   */
  recordWebhookAttempt(delivery: WebhookDelivery, owner: string, outcome: WebhookAttemptOutcome, attempt: { at: string; durationMs: number }): Promise<boolean>;
  /** The company's deliveries, newest first, each with its attempts. */
  listWebhookDeliveries(companyId: number, query: ListWebhookDeliveriesQuery): Promise<WebhookDeliveryRecord[]>;
  /**
   * Makes the delivery due again at `now`, whatever its status (Delivered and Failed go back to
   * Pending, ended_at cleared); one already being attempted keeps its lease. Same row, same
   * event id. False when the company has no such delivery.
   */
  redeliverWebhook(companyId: number, deliveryId: number, now: string): Promise<boolean>;
  /** Up to `limit` companies holding deliveries that ended at or before `endedBefore` (retention sweep step 1). */
  companiesWithEndedDeliveries(input: { endedBefore: string; limit: number }): Promise<number[]>;
  /** Deletes up to `limit` of the company's deliveries that ended at or before `endedBefore`, with their attempts; resolves to how many deliveries. */
  deleteEndedDeliveries(input: { companyId: number; endedBefore: string; limit: number }): Promise<number>;
  /**
   * Outbox rows still to deliver (status Pending, claimed or not), across all companies: the
   * operator's backlog gauge (`work_item_api_outbox_backlog`), not tenant data.
   */
  countPendingWebhookDeliveries(): Promise<number>;
}
