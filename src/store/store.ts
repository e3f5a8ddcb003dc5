/**
 * The store: the one interface through which the rest of the code reads and writes data.
 *
 * Contract every backend keeps (checked by test/store/contract.test.ts against each one):
 * - Every method that touches tenant data takes the `companyId` and filters by it; an id of
 *   another company behaves exactly like a missing id.
 * - `addWorkItem` and `addWorkItems` resolve only after their items are durably committed (a
 *   crash right after the promise resolves loses nothing). At any moment a company has at most one `Open` batch per
 *   work type, whatever the concurrency and the number of processes.
 * - Driver errors never escape: constraint violations become domain outcomes, an unreachable
 *   database becomes `StoreUnavailableError` (errors.ts).
 * - Sweeps across companies (the bot's, the dispatcher's) only find which companies have work;
 *   everything after that goes company by company.
 *
 * Every operation is written once, in core/, over the database port (port.ts); the backend
 * folders hold only what differs. Backend differences are named as `StoreFlags`, never as
 * `if (postgres)` outside this folder.
 */
import type { CallKind } from "../scheduler/capacity.ts";
import type { WebhookEventType } from "../domain/event-types.ts";
import type { BatchKey, WorkBatchCounts, WorkBatchStatus, WorkBatchView, WorkItemError, WorkItemResult, WorkItemStatus, WorkItemView } from "../domain/views.ts";

export interface StoreFlags {
  /**
   * Writes are serialised through one lock (embedded SQLite): processes on one host take turns,
   * and throughput does not grow with more processes.
   */
  singleWriter: boolean;
  /** Concurrent workers can claim rows with `FOR UPDATE SKIP LOCKED`. */
  supportsSkipLocked: boolean;
}

export interface Company {
  companyId: number;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  keyId: string;
  companyId: number;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

export interface ApiKeyWithHash extends ApiKeyRecord {
  secretHash: string;
}

/** One work item as intake stores it: what a single add and each item of a bulk add carry. */
export interface WorkItemFields {
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  /** The normalised request body, stored as given back in the work item view. */
  request: Record<string, unknown>;
  /** By when the Authority wants it (SPEC §10), worked out from exportDate by the API; none when absent. */
  deadlineAt?: string | null;
}

export interface IdempotencyRecord {
  key: string;
  requestHash: string;
  retentionSeconds: number;
}

export interface NewWorkItem extends WorkItemFields {
  companyId: number;
  workType: string;
  /** Items per batch before the open one is closed and a new one opens. */
  batchMaxItems: number;
  idempotency?: IdempotencyRecord;
}

export type AddWorkItemOutcome =
  | { kind: "created"; key: BatchKey }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; key: BatchKey }
  /** Same idempotency key with a different body. */
  | { kind: "keyReused" };

/** An item of a bulk add that the API refused before the store: its index in the request and why. */
export interface ItemRefusal {
  index: number;
  errors: Record<string, string[]>;
}

/**
 * Many items of one company and work type at once (SPEC §11.1, bulk add). The items are stored
 * in one transaction, in order, each as `addWorkItem` would store it (the same batch rules,
 * rollover included, so they may span batches), or none of them is.
 */
export interface NewWorkItems {
  companyId: number;
  workType: string;
  batchMaxItems: number;
  /** The items to store, in request order; may be empty when only the answer is to be kept. */
  items: WorkItemFields[];
  /**
   * The key names the whole request. Its record keeps the whole first answer: the keys of the
   * stored items and the `refused` items, so a replay gives back exactly that answer.
   */
  idempotency?: IdempotencyRecord & { refused: ItemRefusal[] };
}

export type AddWorkItemsOutcome =
  /** `keys[i]` is where `items[i]` landed. */
  | { kind: "created"; keys: BatchKey[] }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; keys: BatchKey[]; refused: ItemRefusal[] }
  /** Same idempotency key with a different body (or first used by a single add). */
  | { kind: "keyReused" };

export interface ListWorkItemsQuery {
  status?: WorkItemStatus;
  customerReference?: string;
  workBatchId?: number;
  /** Only items whose filing deadline is before this instant (ISO 8601, UTC). */
  deadlineBefore?: string;
  /** Keyset: only items with a smaller id (newest first). */
  beforeWorkItemId?: number;
  limit: number;
}

/**
 * An item the bot took from the filing queue to hand to the authority: `InProgress`, held by
 * the claim's owner until its lease runs out.
 */
export interface DueItem {
  companyId: number;
  workBatchId: number;
  workItemId: number;
  workType: string;
  request: Record<string, unknown>;
  /** Transient failures so far. */
  attempts: number;
  deadlineAt: string | null;
}

/** A Submitted item whose next status request is due, held by the claim's owner until its lease runs out. */
export interface ItemToPoll {
  companyId: number;
  workBatchId: number;
  workItemId: number;
  workType: string;
  applicationNumber: string;
  /** Status requests made so far. */
  polls: number;
}

/**
 * What the bot records for one item after talking to the authority. From InProgress:
 * submitted, retried, or (rejected at submit, or out of attempts) failed. From Submitted:
 * pending, succeeded or failed.
 */
export type ItemOutcome =
  /** Filed: Submitted with the application number; the first status request is due at `nextPollAt`. */
  | { kind: "submitted"; applicationNumber: string; submittedAt: string; nextPollAt: string }
  /**
   * Still undecided after a status request (pending, or a transient failure in `lastError`):
   * polls + 1, the next at `nextPollAt`. The first of these emits `workitem.submitted`.
   */
  | { kind: "pending"; nextPollAt: string; lastError: string | null }
  /** Registered: Successful with the result; decided_at = now. */
  | { kind: "succeeded"; result: WorkItemResult }
  /**
   * `decided`: the Authority rejected it (decided_at = now). `transient`: the last of too many
   * transient failures, so `attempts` + 1 as well.
   */
  | { kind: "failed"; error: WorkItemError; decided?: boolean; transient?: boolean; lastError?: string }
  /** Transient at submit: back to New, attempts + 1, not before `nextAttemptAt`. */
  | { kind: "retried"; nextAttemptAt: string; lastError: string };

/** The shared circuit breaker in front of an authority (SPEC §10). */
export interface AuthorityBreaker {
  state: "closed" | "open" | "halfOpen";
  /** open: when one probe may go; halfOpen: when the probe's turn ends. */
  until: string | null;
}

export type CancelOutcome =
  | { kind: "cancelled"; item: WorkItemView }
  /** The item exists but is not New, or its batch is no longer Open. */
  | { kind: "conflict"; item: WorkItemView; batchStatus: WorkBatchStatus }
  | { kind: "notFound" };

/** An item held by a worker's claim: what fences the writes about its call. */
export interface ItemClaim {
  companyId: number;
  workItemId: number;
  /** The worker that holds it. */
  owner: string;
}

/** What a call for an authority slot got (see src/scheduler/capacity.ts). */
export type SlotGrant =
  /** Slot `slot` is held until the call ends; send the call at `sendAtMs` (the rate limit), not before. */
  | { kind: "granted"; slot: number; sendAtMs: number }
  /** Every slot this kind may hold is taken: ask again soon. */
  | { kind: "wait" }
  /** The shared breaker is open (and this is not its probe): no call. */
  | { kind: "breakerOpen" };

export interface SlotRequest {
  /** Unique per call: who releases the slot. */
  holder: string;
  kind: CallKind;
  nowMs: number;
  /** The breaker's probe may go while the breaker is not closed. */
  probe: boolean;
  maxConcurrency: number;
  maxRps: number;
  /** How long a slot is held at most past its send time: a holder that died frees it then. */
  holdMs: number;
}

export type { WebhookEventType };

/**
 * One event of a company's feed (SPEC §11.2), as stored in the transaction of the change that
 * caused it, whether or not the item has a webhook_url.
 */
export interface FeedEvent {
  /** The company's events are numbered 1, 2, 3… in the order they were committed. */
  position: number;
  /** The `webhook-id` of the event's delivery, when it has one. */
  eventId: string;
  type: WebhookEventType;
  /** When it happened (ISO 8601 UTC). */
  timestamp: string;
  /**
   * The work item view at the event, as the JSON text stored with it: the feed passes it on
   * without parsing and serialising it again (docs/performance.md, "Event feed").
   */
  dataJson: string;
}

export interface ListEventsQuery {
  /** Only events after this position (0: from the oldest kept). */
  afterPosition: number;
  type?: WebhookEventType;
  workItemId?: number;
  limit: number;
}

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

/** The server keys a store keeps when none is configured. */
export type ServerKeyName = "jwt" | "data-encryption";


// Operations (SPEC §12): operators see every company, so these are not tenant operations; the
// statements that look across companies say so in core/sql-operations.ts.

export type OperatorRole = "viewer" | "operator" | "admin";

export interface Operator {
  operatorId: string;
  email: string;
  role: OperatorRole;
  disabled: boolean;
  createdAt: string;
}

export interface OperatorWithHash extends Operator {
  /** scrypt, see src/operators/passwords.ts. */
  passwordHash: string;
}

/**
 * Who acts, why and when: every state-changing operator call passes one, and the store writes
 * the audit entry (and the item's timeline entry) in the transaction of the change itself.
 */
export interface OperatorAction {
  operator: { operatorId: string; email: string };
  reason: string;
  at: string;
}

export interface CompanyOverview {
  companyId: number;
  name: string;
  counts: WorkBatchCounts;
  openBatchItems: number;
  oldestNewAt: string | null;
  failedLast24h: number;
  pendingWebhookDeliveries: number;
}

/**
 * The queue by deadline (SPEC §14): items still New, the ones whose deadline has passed and those
 * of each of the next deadlines, over all companies.
 */
export interface DeadlineOverview {
  /** New items whose deadlineAt has passed. */
  overdue: number;
  /** The next distinct deadlines (deadlineAt at or after now), earliest first. */
  next: DeadlineLoad[];
}

export interface DeadlineLoad {
  deadlineAt: string;
  /** New items due at this deadline. */
  unsubmitted: number;
  /** The companies those items belong to. */
  companies: number;
}

export interface BotPassSummary {
  startedAt: string;
  finishedAt: string;
  submitted: number;
  succeeded: number;
  failed: number;
  retried: number;
}

/** An item as operators see it: the integrator's view plus the company it belongs to. */
export type OperatorWorkItemView = WorkItemView & { companyId: number };

export interface OperatorWorkItemsQuery {
  companyId?: number;
  status?: WorkItemStatus;
  customerReference?: string;
  applicationNumber?: string;
  registrationNumber?: string;
  deadlineBefore?: string;
  /** Keyset: only items with a smaller id (newest first). */
  beforeWorkItemId?: number;
  limit: number;
}

export interface TimelineEntry {
  at: string;
  kind: "created" | "status" | "attempt" | "webhook" | "operator";
  status: WorkItemStatus | null;
  detail: string | null;
  operator: { operatorId: string; email: string } | null;
  reason: string | null;
}

export interface AuditEntry {
  auditId: number;
  at: string;
  operator: { operatorId: string; email: string };
  action: AuditAction;
  target: { companyId: number | null; workItemId: number | null; workType: string | null; deliveryId: number | null };
  reason: string;
}

export type AuditAction = "workitem.retry" | "workitem.cancel" | "bot.pause" | "bot.resume" | "webhook.redeliver";

export type OperatorItemOutcome =
  | { kind: "done"; item: OperatorWorkItemView }
  /** The item is not in a state the action applies to. */
  | { kind: "conflict"; item: OperatorWorkItemView }
  | { kind: "notFound" };

export interface RetryFilter {
  companyId?: number;
  /** Only items that failed at or after this instant. */
  failedAfter?: string;
  /** Only items whose error has this code. */
  code?: string;
}

export interface Store {
  readonly kind: "sqlite" | "postgres";
  readonly flags: StoreFlags;

  /** Resolves when the database answers; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;

  // Companies and credentials (admin CLI and login).
  createCompany(input: { companyId?: number; name: string }): Promise<Company>;
  getCompany(companyId: number): Promise<Company | undefined>;
  createApiKey(input: { companyId: number; keyId: string; name: string | null; secretHash: string }): Promise<ApiKeyRecord>;
  findApiKey(companyId: number, keyId: string): Promise<ApiKeyWithHash | undefined>;
  listApiKeys(companyId: number): Promise<ApiKeyRecord[]>;
  /** Admin operation by key id alone; returns the key as revoked, or undefined when unknown. */
  revokeApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /**
   * A server key generated when none is configured (the HS256 token key, the data encryption
   * key), kept so that every process of one database agrees: `candidate` is stored when there
   * is none yet under `name`, and the stored one is returned. SQLite: a file beside the database
   * (mode 0600); PostgreSQL: a row of signing_secrets.
   */
  getOrCreateServerKey(name: ServerKeyName, candidate: string): Promise<string>;

  // Intake and reads (API).
  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome>;
  /**
   * A bulk add (see NewWorkItems): through the same intake path as `addWorkItem` (the SQLite
   * writer thread's group commit, PostgreSQL's group-commit lanes), one transaction for all the
   * items. An idempotency key is shared with `addWorkItem`: a key first used by the other kind
   * of add is `keyReused`.
   */
  addWorkItems(input: NewWorkItems): Promise<AddWorkItemsOutcome>;
  getWorkItem(companyId: number, workItemId: number): Promise<WorkItemView | undefined>;
  getWorkBatch(companyId: number, workBatchId: number): Promise<WorkBatchView | undefined>;
  listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]>;

  /**
   * New → Cancelled, only while the item is New and its batch Open, atomically against the bot
   * closing the batch (PostgreSQL: lock the batch row FOR SHARE before updating the item).
   * Sets updated_at and completed_at. An id of another company is `notFound`.
   */
  cancelWorkItem(companyId: number, workItemId: number, now: string): Promise<CancelOutcome>;

  // The bot (SPEC §5, §10, §14): one filing queue over every company.
  /**
   * Companies with batches to take up (`toQueue`: an Open batch holding at least one item, or a
   * Closed one, of a work type not paused) or unfinished ones (their deadlines are watched), in
   * company order.
   */
  companiesWithBotWork(): Promise<Array<{ companyId: number; toQueue: boolean }>>;
  /**
   * In one transaction: the company's non-empty Open batches of work types not paused → Closed,
   * and every Closed one → Processing, its New items due from `now` in the filing queue (a batch
   * with no New item → Completed). Returns how many batches were taken up.
   */
  queueBatches(companyId: number, now: string): Promise<number>;
  /**
   * Takes up to `limit` items from the filing queue, in its order (src/scheduler/order.ts), over
   * every company: items New and due by `dueBefore`, and items InProgress whose claim's lease ran
   * out (a worker died; they are filed again with the same idempotency key). Each becomes
   * InProgress, held by `owner` until `leaseExpiresAt`; each company served moves to the back of
   * its deadline's turn. `now` tells on-time deadlines from late ones. Concurrent claimers never
   * get the same item.
   */
  claimFilingWork(input: { owner: string; now: string; dueBefore: string; leaseExpiresAt: string; limit: number }): Promise<DueItem[]>;
  /**
   * Takes up to `limit` Submitted items whose next status request is due by `dueBefore` (or
   * whose claim's lease ran out), held by `owner` until `leaseExpiresAt`, the longest waiting first.
   */
  claimStatusRequests(input: { owner: string; dueBefore: string; leaseExpiresAt: string; limit: number }): Promise<ItemToPoll[]>;
  /**
   * In one transaction, moves a claimed item to its outcome (see ItemOutcome) and records the
   * event it emits (Successful, Failed and the first pending): in the feed (`listEvents`), and as
   * a `webhook_outbox` row with the same event id when the item has a webhook_url. The batch
   * completes with its last item. False, with nothing changed, when `claim.owner` no longer
   * holds the item (another worker took it over) or it is not in the state the outcome comes from.
   */
  recordItemOutcome(claim: ItemClaim, outcome: ItemOutcome, input: { now: string }): Promise<boolean>;
  /**
   * Gives back claimed items whose call was not made (the breaker opened, the worker stops): due
   * again from `now`, in their place, no attempt spent (InProgress → New; Submitted stays).
   * Items no longer held by their owner are left alone. Returns how many were given back.
   */
  releaseItems(claims: ItemClaim[], input: { now: string; reason: string }): Promise<number>;
  /**
   * Items of the company, still New or InProgress, whose deadline is at or before
   * `riskBefore` and that were not flagged yet: flagged now, each emitting
   * `workitem.deadline_at_risk` (SPEC §10) once, recorded as in `recordItemOutcome`. Returns how many.
   */
  flagDeadlinesAtRisk(companyId: number, input: { riskBefore: string; now: string }): Promise<number>;

  // The authority's capacity, shared by every process (SPEC §14; not tenant data).
  /**
   * In one transaction over every process: whether a call may take a slot now (capacity,
   * the share of its kind, the breaker), and if so the slot and when it may be sent.
   */
  takeAuthoritySlot(authority: string, request: SlotRequest): Promise<SlotGrant>;
  /** Frees a slot `holder` took; nothing when it is no longer the holder. */
  releaseAuthoritySlot(authority: string, slot: number, holder: string): Promise<void>;

  // The shared circuit breaker in front of each authority (not tenant data).
  /** The breaker's state; `closed` when it never opened. */
  getAuthorityBreaker(authority: string): Promise<AuthorityBreaker>;
  /** → open until `until` (one probe may go then). */
  openAuthorityBreaker(authority: string, input: { until: string; now: string }): Promise<void>;
  /**
   * open with `until` passed, or halfOpen with its probe's turn over → halfOpen held by `owner`
   * until `until`. True only for the one caller that gets to probe.
   */
  claimAuthorityBreakerProbe(authority: string, input: { owner: string; until: string; now: string }): Promise<boolean>;
  /** → closed. */
  closeAuthorityBreaker(authority: string, now: string): Promise<void>;

  // Webhooks (SPEC §6, §11.3). Secrets are opaque text here; src/webhooks/secrets.ts encrypts them.
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
  /** Up to `limit` companies with Pending outbox rows due at `now`, the longest waiting first. */
  companiesWithDueDeliveries(input: { now: string; limit: number }): Promise<number[]>;
  /**
   * Claims up to `limit` of the company's Pending outbox rows with next_attempt_at ≤ now, oldest
   * due first: sets lease_owner and pushes next_attempt_at to `leaseExpiresAt`, so a dispatcher
   * that dies leaves them due again later. Concurrent claimers never get the same row.
   */
  claimWebhookDeliveries(input: { companyId: number; owner: string; now: string; leaseExpiresAt: string; limit: number }): Promise<WebhookDelivery[]>;
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
  // The event feed (SPEC §11.2).
  /**
   * The company's events after `afterPosition` that match the filters, oldest first (position
   * order, which is commit order), at most `limit`. A reader that passes the last position it
   * got never misses an event committed later, on any store and with any number of processes.
   */
  listEvents(companyId: number, query: ListEventsQuery): Promise<FeedEvent[]>;
  /** Up to `limit` companies holding events created at or before `createdBefore` (sweep step 1). */
  companiesWithExpiredEvents(input: { createdBefore: string; limit: number }): Promise<number[]>;
  /** Deletes up to `limit` of the company's oldest events created at or before `createdBefore`; resolves to how many. */
  deleteExpiredEvents(input: { companyId: number; createdBefore: string; limit: number }): Promise<number>;

  /** Up to `limit` companies holding idempotency keys created at or before `createdBefore` (sweep step 1). */
  companiesWithExpiredIdempotencyKeys(input: { createdBefore: string; limit: number }): Promise<number[]>;
  /** Deletes up to `limit` of the company's idempotency keys created at or before `createdBefore`; resolves to how many. */
  deleteExpiredIdempotencyKeys(input: { companyId: number; createdBefore: string; limit: number }): Promise<number>;

  // Operators and their credentials (CLI, console sign-in, operator API).
  /** Undefined when the e-mail is taken. */
  createOperator(input: { operatorId: string; email: string; role: OperatorRole; passwordHash: string; now: string }): Promise<Operator | undefined>;
  listOperators(): Promise<Operator[]>;
  findOperatorByEmail(email: string): Promise<OperatorWithHash | undefined>;
  /** Disables the operator and, in the same transaction, ends its sessions and tokens. Undefined when unknown. */
  disableOperator(email: string, now: string): Promise<Operator | undefined>;
  /** A new password hash; the operator's sessions end with the old password. Undefined when unknown. */
  setOperatorPassword(email: string, passwordHash: string): Promise<Operator | undefined>;
  addOperatorToken(input: { operatorId: string; tokenHash: string; now: string }): Promise<void>;
  /** The enabled operator holding the token, or undefined. */
  findOperatorByToken(tokenHash: string): Promise<Operator | undefined>;
  addOperatorSession(input: { operatorId: string; sessionHash: string; now: string }): Promise<void>;
  /**
   * The enabled operator of a session seen at or after `idleSince`, with when it was last seen;
   * undefined for an unknown, idle or disabled one.
   */
  findOperatorBySession(sessionHash: string, idleSince: string): Promise<(Operator & { lastSeenAt: string }) | undefined>;
  touchOperatorSession(sessionHash: string, now: string): Promise<void>;
  deleteOperatorSession(sessionHash: string): Promise<void>;

  // What operators read and do, across companies (SPEC §12.2).
  /** Every company with its counts; read from counters the database keeps, not by counting items. */
  companyOverview(input: { now: string }): Promise<CompanyOverview[]>;
  /** New items past their deadline, and the `limit` next deadlines with the New items due then. */
  deadlineOverview(input: { now: string; limit: number }): Promise<DeadlineOverview>;
  /** Items filed with the authority (their submittedAt) at or after `since`, over all companies. */
  countSubmittedSince(since: string): Promise<number>;
  recordBotPass(pass: BotPassSummary): Promise<void>;
  lastBotPass(): Promise<BotPassSummary | undefined>;
  pausedWorkTypes(): Promise<string[]>;
  /** Pauses or resumes filing of a work type, with its audit entry. */
  setWorkTypePaused(workType: string, paused: boolean, action: OperatorAction): Promise<void>;
  /** Items across companies (or of one), newest first. */
  listAllWorkItems(query: OperatorWorkItemsQuery): Promise<OperatorWorkItemView[]>;
  /** The item with every recorded step, oldest first; undefined when unknown. */
  getWorkItemTimeline(workItemId: number): Promise<{ item: OperatorWorkItemView; timeline: TimelineEntry[] } | undefined>;
  /**
   * Failed → New with attempts reset, into its company's Open batch of its work type (opening one,
   * or rolling over a full one, as intake does); emits `workitem.retried`; writes the audit and
   * timeline entries. All in one transaction. `conflict` unless the item is Failed.
   */
  retryWorkItem(workItemId: number, input: { batchMaxItems: number }, action: OperatorAction): Promise<OperatorItemOutcome>;
  /** Up to `limit` Failed items matching `filter`, oldest failure first, retried as `retryWorkItem` does; resolves to how many. */
  retryWorkItems(filter: RetryFilter, input: { batchMaxItems: number; limit: number }, action: OperatorAction): Promise<number>;
  /** As the integrator's cancel (`cancelWorkItem`), with the audit and timeline entries. */
  operatorCancelWorkItem(workItemId: number, action: OperatorAction): Promise<OperatorItemOutcome>;
  /** As `redeliverWebhook`, for a delivery of any company, with the audit entry. False when unknown. */
  operatorRedeliverWebhook(deliveryId: number, action: OperatorAction): Promise<boolean>;
  /** Deliveries across companies (or of one), newest first, each with its attempts and company. */
  listAllWebhookDeliveries(query: ListWebhookDeliveriesQuery & { companyId?: number }): Promise<Array<WebhookDeliveryRecord & { companyId: number }>>;
  /** Newest first. */
  listAudit(query: { beforeAuditId?: number; limit: number }): Promise<AuditEntry[]>;
}
