/**
 * WorkItemClient: the typed SDK of the Work-Item API (SPEC §9). It needs nothing beyond Node 20:
 * global fetch and node:crypto.
 *
 * - One login serves every call until 30 s before the token's `expires`; concurrent calls that
 *   need a token share one login.
 * - A 401 gets one re-authentication and one repeat of the request.
 * - 429, 502, 503 and 504 are retried honouring Retry-After, and so are network errors and
 *   timeouts, with capped jittered backoff.
 * - Every addWorkItemCreate and addWorkItemCreateBulk carries an Idempotency-Key (a random UUID
 *   unless the caller gives one) that stays the same across its retries, so a retry never stores
 *   a second item.
 */
import { randomUUID } from "node:crypto";
import { attempt, type Connection, type RequestSpec } from "./attempt.ts";
import { errorFromResponse, WorkItemNetworkError, type WorkItemApiError } from "./errors.ts";
import { EventStream, type EventStreamOptions } from "./event-stream.ts";
import { backoffDelay, IDEMPOTENCY_IN_FLIGHT_TYPE, parseRetryAfter, RETRYABLE_STATUSES, sleep } from "./retry.ts";
import { TokenCache, type LoginAnswer } from "./token-cache.ts";
import type {
  AddWorkItemResult,
  AddWorkItemsResult,
  AuthorityRvdmWorkItemChange,
  AuthorityRvdmWorkItemCreate,
  EventPage,
  AuthorityRvdmWorkItemCreateBulk,
  AuthorityRvdmFollowUps,
  AuthorityRvdmWorkItemWithdraw,
  HealthStatus,
  ListEventsQuery,
  ListWorkItemsQuery,
  ListWebhookDeliveriesQuery,
  ReadyStatus,
  TokenResponse,
  WebhookDelivery,
  WebhookDeliveryPage,
  WorkBatchView,
  WorkItemPage,
  WorkItemBulkResults,
  WorkItemView,
} from "./types.ts";

export interface WorkItemClientOptions {
  /** e.g. `https://work-items.example` (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  secret: string;
  /** A fetch implementation; default the global one. */
  fetch?: typeof fetch;
  /** Repeats after a retryable status or a network error; default 4. */
  maxRetries?: number;
  /** First backoff step; default 250 ms, doubling per retry. */
  retryBaseDelayMs?: number;
  /** Largest backoff step; default 8 s. */
  retryMaxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error surfaces instead. Default 60 s. */
  maxRetryAfterMs?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Log in again this long before the token expires; default 30 s. */
  refreshMarginMs?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface AddWorkItemOptions extends CallOptions {
  /** 1–255 characters; the same key and body within 24 h returns the first answer. */
  idempotencyKey?: string;
}

interface Answer {
  response: Response;
  /** True when an earlier attempt got no answer: it may have taken effect. */
  repeatedAfterNoAnswer: boolean;
}

/** The operation of each kind of follow-up: AddWorkItem<Kind>. */
type FollowUpOperation<Kind extends keyof AuthorityRvdmFollowUps> = `AddWorkItem${Capitalize<Kind>}`;

/**
 * An add for each kind of follow-up the server has (SPEC §15): `addWorkItem<Kind>`. The class
 * implements it, so a new kind of follow-up is a compile error here until the SDK has its add.
 */
export type FollowUpAdds = {
  [Kind in keyof AuthorityRvdmFollowUps as Uncapitalize<FollowUpOperation<Kind>>]: (body: AuthorityRvdmFollowUps[Kind], options?: AddWorkItemOptions) => Promise<AddWorkItemResult>;
};

/** A 409 handed back to the caller instead of thrown (see cancelWorkItem). */
interface Conflict {
  conflict: WorkItemApiError;
  repeatedAfterNoAnswer: boolean;
}

export class WorkItemClient implements FollowUpAdds {
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly retryMaxDelayMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly connection: Connection;
  private readonly tokens: TokenCache;

  constructor(private readonly options: WorkItemClientOptions) {
    if (!options.baseUrl) throw new TypeError("WorkItemClient: baseUrl is required");
    if (!options.apiKey || !options.secret) throw new TypeError("WorkItemClient: apiKey and secret are required");
    const baseUrl = options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`;
    this.maxRetries = options.maxRetries ?? 4;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.retryMaxDelayMs = options.retryMaxDelayMs ?? 8000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.connection = { baseUrl, fetch: options.fetch ?? globalThis.fetch, timeoutMs: options.timeoutMs ?? 30_000 };
    this.tokens = new TokenCache(() => this.login(), options.refreshMarginMs ?? 30_000);
  }

  /** POST /api/Login/Authenticate now; the token is cached for the calls that follow. */
  async authenticate(): Promise<TokenResponse> {
    const { bearerToken, expires } = (await this.tokens.refresh()).answer;
    return { bearerToken, expires };
  }

  /** GET /api/AuthorityRvdm/Ping: `Pong --> Saturday, 21 November 2026 14:03:12`. */
  pingAuthorityRvdm(options?: CallOptions): Promise<string> {
    return this.text({ method: "GET", path: "api/AuthorityRvdm/Ping", auth: true }, options);
  }

  /** GET /api/VlmMad/Ping. */
  pingVlmMad(options?: CallOptions): Promise<string> {
    return this.text({ method: "GET", path: "api/VlmMad/Ping", auth: true }, options);
  }

  /** POST /api/AuthorityRvdm/AddWorkItemCreate, idempotent across the SDK's own retries. */
  addWorkItemCreate(body: AuthorityRvdmWorkItemCreate, options: AddWorkItemOptions = {}): Promise<AddWorkItemResult> {
    return this.addOne("AddWorkItemCreate", body, options);
  }

  /**
   * POST /api/AuthorityRvdm/AddWorkItemChange (SPEC §15): a change of `originalWorkItemId`'s
   * document, idempotent across the SDK's own retries. A 409 (WorkItemApiError) says why in
   * `problem.code`: ORIGINAL_CLOSED, WITHDRAWAL_PENDING or CHANGE_CUTOFF_PASSED.
   */
  addWorkItemChange(body: AuthorityRvdmWorkItemChange, options: AddWorkItemOptions = {}): Promise<AddWorkItemResult> {
    return this.addOne("AddWorkItemChange", body, options);
  }

  /** POST /api/AuthorityRvdm/AddWorkItemWithdraw (SPEC §15): the withdrawal of `originalWorkItemId`'s document, idempotent as `addWorkItemChange`. */
  addWorkItemWithdraw(body: AuthorityRvdmWorkItemWithdraw, options: AddWorkItemOptions = {}): Promise<AddWorkItemResult> {
    return this.addOne("AddWorkItemWithdraw", body, options);
  }

  /** One add under one Idempotency-Key (the caller's, or a new one), kept across the SDK's retries. */
  private async addOne(operation: "AddWorkItemCreate" | FollowUpOperation<keyof AuthorityRvdmFollowUps>, body: object, options: AddWorkItemOptions): Promise<AddWorkItemResult> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const spec: RequestSpec = { method: "POST", path: `api/AuthorityRvdm/${operation}`, body, headers: { "idempotency-key": idempotencyKey }, auth: true };
    const { response } = await this.send(spec, options);
    const key = (await response.json()) as { workBatchId: number; workItemId: number };
    return { workBatchId: key.workBatchId, workItemId: key.workItemId, idempotencyKey, replayed: response.headers.get("idempotency-replayed") === "true" };
  }

  /**
   * POST /api/AuthorityRvdm/AddWorkItemCreateBulk: 1–1,000 items at once, idempotent across the
   * SDK's own retries. Resolves with one result per item in request order: `workItemId` and
   * `workBatchId` for a stored item, `status: 400` and `errors` for a refused one. With
   * `allOrNothing: true` an invalid item rejects the call with the 400's WorkItemApiError
   * (errors named `items[<index>].<field>`) and nothing is stored.
   */
  async addWorkItemCreateBulk(body: AuthorityRvdmWorkItemCreateBulk, options: AddWorkItemOptions = {}): Promise<AddWorkItemsResult> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const spec: RequestSpec = { method: "POST", path: "api/AuthorityRvdm/AddWorkItemCreateBulk", body, headers: { "idempotency-key": idempotencyKey }, auth: true };
    const { response } = await this.send(spec, options);
    const { results } = (await response.json()) as WorkItemBulkResults;
    return { results, idempotencyKey, replayed: response.headers.get("idempotency-replayed") === "true" };
  }

  /** GET /api/AuthorityRvdm/WorkItem/{workItemId}. */
  getWorkItem(workItemId: number, options?: CallOptions): Promise<WorkItemView> {
    return this.json({ method: "GET", path: `api/AuthorityRvdm/WorkItem/${id(workItemId)}`, auth: true }, options);
  }

  /** GET /api/AuthorityRvdm/WorkBatch/{workBatchId}. */
  getWorkBatch(workBatchId: number, options?: CallOptions): Promise<WorkBatchView> {
    return this.json({ method: "GET", path: `api/AuthorityRvdm/WorkBatch/${id(workBatchId)}`, auth: true }, options);
  }

  /** GET /api/AuthorityRvdm/WorkItems: one page, newest first. */
  listWorkItems(query: ListWorkItemsQuery = {}, options?: CallOptions): Promise<WorkItemPage> {
    return this.json({ method: "GET", path: "api/AuthorityRvdm/WorkItems", query: { ...query }, auth: true }, options);
  }

  /** Every item matching `query` (minus its cursor), newest first, fetching page after page. */
  async *iterateWorkItems(query: Omit<ListWorkItemsQuery, "cursor"> = {}, options?: CallOptions): AsyncGenerator<WorkItemView, void, undefined> {
    yield* everyPage((cursor) => this.listWorkItems({ ...query, cursor }, options), (page) => page.items);
  }

  /** GET /api/Events: one page of the company's event feed after `query.after`, oldest first. */
  listEvents(query: ListEventsQuery = {}, options?: CallOptions): Promise<EventPage> {
    return this.json({ method: "GET", path: "api/Events", query: { ...query }, auth: true }, options);
  }

  /**
   * The company's events after `query.after` (from the oldest kept without it), oldest first,
   * page by page: `for await (const event of client.events({ type: "workitem.failed" }))`. Ends
   * once caught up; with `{ follow: true }` it polls for newer events until `signal` aborts.
   * `stream.cursor` is where to resume.
   */
  events(query: ListEventsQuery = {}, options: EventStreamOptions = {}): EventStream {
    return new EventStream((page, signal) => this.listEvents(page, signal ? { signal } : {}), query, options);
  }

  /**
   * DELETE /api/AuthorityRvdm/WorkItem/{workItemId}: cancel a `New` item of an `Open` batch.
   * When an earlier attempt got no answer and the repeat meets a 409, the item is read back:
   * if it is `Cancelled`, that first attempt did it and the call succeeds.
   */
  async cancelWorkItem(workItemId: number, options: CallOptions = {}): Promise<WorkItemView> {
    const spec: RequestSpec = { method: "DELETE", path: `api/AuthorityRvdm/WorkItem/${id(workItemId)}`, auth: true };
    const answer = await this.send(spec, options, { returnConflict: true });
    if ("conflict" in answer) {
      if (answer.repeatedAfterNoAnswer) {
        const item = await this.getWorkItem(workItemId, options);
        if (item.status === "Cancelled") return item;
      }
      throw answer.conflict;
    }
    return (await answer.response.json()) as WorkItemView;
  }

  /** GET /api/Webhooks/Deliveries: one page of the company's webhook deliveries, newest first, each with its attempts. */
  listWebhookDeliveries(query: ListWebhookDeliveriesQuery = {}, options?: CallOptions): Promise<WebhookDeliveryPage> {
    return this.json({ method: "GET", path: "api/Webhooks/Deliveries", query: { ...query }, auth: true }, options);
  }

  /** Every delivery matching `query` (minus its cursor), newest first, fetching page after page. */
  async *iterateWebhookDeliveries(query: Omit<ListWebhookDeliveriesQuery, "cursor"> = {}, options?: CallOptions): AsyncGenerator<WebhookDelivery, void, undefined> {
    yield* everyPage((cursor) => this.listWebhookDeliveries({ ...query, cursor }, options), (page) => page.deliveries);
  }

  /**
   * POST /api/Webhooks/Deliveries/{deliveryId}/Redeliver: one new attempt soon, even for a
   * delivered or failed delivery, with the same webhook-id. Resolves to the delivery, pending again.
   */
  redeliverWebhook(deliveryId: number, options?: CallOptions): Promise<WebhookDelivery> {
    return this.json({ method: "POST", path: `api/Webhooks/Deliveries/${id(deliveryId)}/Redeliver`, auth: true }, options);
  }

  /** GET /healthz. */
  health(options?: CallOptions): Promise<HealthStatus> {
    return this.json({ method: "GET", path: "healthz", auth: false }, options);
  }

  /** GET /readyz; a 503 surfaces as WorkItemApiError after the retries. */
  ready(options?: CallOptions): Promise<ReadyStatus> {
    return this.json({ method: "GET", path: "readyz", auth: false }, options);
  }

  /** GET /metrics: Prometheus text. */
  metrics(options?: CallOptions): Promise<string> {
    return this.text({ method: "GET", path: "metrics", auth: false }, options);
  }

  /** GET /openapi.json. */
  openApiDocument(options?: CallOptions): Promise<Record<string, unknown>> {
    return this.json({ method: "GET", path: "openapi.json", auth: false }, options);
  }

  private async login(): Promise<LoginAnswer> {
    const spec: RequestSpec = { method: "POST", path: "api/Login/Authenticate", body: { apiKey: this.options.apiKey, secret: this.options.secret }, auth: false };
    const { response } = await this.send(spec, {});
    const { bearerToken, expires } = (await response.json()) as TokenResponse;
    const date = response.headers.get("date");
    return { bearerToken, expires, ...(date ? { serverDate: Date.parse(date) } : {}) };
  }

  private async json<T>(spec: RequestSpec, options: CallOptions = {}): Promise<T> {
    return (await (await this.send(spec, options)).response.json()) as T;
  }

  private async text(spec: RequestSpec, options: CallOptions = {}): Promise<string> {
    return (await this.send(spec, options)).response.text();
  }

  /** One logical call: retries, the one re-authentication, and the error of a final failure. */
  private send(spec: RequestSpec, options: CallOptions): Promise<Answer>;
  private send(spec: RequestSpec, options: CallOptions, flags: { returnConflict: true }): Promise<Answer | Conflict>;
  private async send(spec: RequestSpec, options: CallOptions, flags: { returnConflict?: boolean } = {}): Promise<Answer | Conflict> {
    const shownPath = `/${spec.path}`;
    let retries = 0;
    let reauthenticated = false;
    let repeatedAfterNoAnswer = false;
    for (;;) {
      const token = spec.auth ? await this.tokens.get() : undefined;
      let response: Response;
      try {
        response = await attempt(this.connection, spec, token, options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (retries >= this.maxRetries) throw new WorkItemNetworkError(spec.method, shownPath, retries + 1, error);
        await sleep(backoffDelay(retries++, this.retryBaseDelayMs, this.retryMaxDelayMs), options.signal);
        repeatedAfterNoAnswer = true;
        continue;
      }
      if (response.ok) return { response, repeatedAfterNoAnswer };
      if (response.status === 401 && token !== undefined && !reauthenticated) {
        // The server no longer accepts this token (signing key changed, clock, revocation race).
        await discard(response);
        reauthenticated = true;
        this.tokens.invalidate(token);
        continue;
      }
      const error = await errorFromResponse(spec.method, shownPath, response);
      const retryable = RETRYABLE_STATUSES.has(response.status) || (response.status === 409 && error.type === IDEMPOTENCY_IN_FLIGHT_TYPE);
      if (retryable && retries < this.maxRetries) {
        const delay = retryDelay(response, backoffDelay(retries, this.retryBaseDelayMs, this.retryMaxDelayMs));
        if (delay <= this.maxRetryAfterMs) {
          retries++;
          await sleep(delay, options.signal);
          continue;
        }
      }
      if (response.status === 409 && flags.returnConflict && !retryable) return { conflict: error, repeatedAfterNoAnswer };
      throw error;
    }
  }
}

/** Retry-After when the server sent one (plus a little jitter), else our own backoff. */
function retryDelay(response: Response, fallback: number): number {
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
  return retryAfter === undefined ? fallback : retryAfter + Math.round(Math.random() * 100);
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function id(value: number): string {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`expected a positive integer id, got ${String(value)}`);
  return String(value);
}

/** What a newest-first keyset page shares: a cursor to the next page, null on the last. */
type KeysetPage = { nextCursor: string | null };

/** Every row of every page, fetching the next page only when the rows of this one are used up. */
async function* everyPage<P extends KeysetPage, R>(fetch: (cursor: string | undefined) => Promise<P>, rows: (page: P) => R[]): AsyncGenerator<R, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetch(cursor);
    yield* rows(page);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
