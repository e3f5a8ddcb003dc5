/**
 * The store: the one interface through which the rest of the code reads and writes data.
 *
 * Contract every backend keeps (checked by test/store/contract.test.ts against each one):
 * - Every method that touches tenant data takes the `companyId` and filters by it; an id of
 *   another company behaves exactly like a missing id.
 * - `addWorkItem` resolves only after the item is durably committed (a crash right after the
 *   promise resolves loses nothing). At any moment a company has at most one `Open` batch per
 *   work type, whatever the concurrency and the number of processes.
 * - Driver errors never escape: constraint violations become domain outcomes, an unreachable
 *   database becomes `StoreUnavailableError`.
 *
 * Backend differences are named as `StoreFlags`, never as `if (postgres)` outside this folder.
 */
import type { BatchKey, WorkBatchView, WorkItemError, WorkItemResult, WorkItemStatus, WorkItemView } from "../domain/views.ts";

export interface StoreFlags {
  /** Only one process may write (embedded SQLite): API and worker must share a process. */
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

export interface NewWorkItem {
  companyId: number;
  workType: string;
  customerReference: string;
  documentReference: string | null;
  webhookUrl: string | null;
  /** The normalised request body, stored as given back in the work item view. */
  request: Record<string, unknown>;
  /** Items per batch before the open one is closed and a new one opens. */
  batchMaxItems: number;
  idempotency?: { key: string; requestHash: string; retentionSeconds: number };
}

export type AddWorkItemOutcome =
  | { kind: "created"; key: BatchKey }
  /** Same idempotency key and body within the retention window: the first answer again. */
  | { kind: "replayed"; key: BatchKey }
  /** Same idempotency key with a different body. */
  | { kind: "keyReused" };

export interface ListWorkItemsQuery {
  status?: WorkItemStatus;
  customerReference?: string;
  workBatchId?: number;
  /** Keyset: only items with a smaller id (newest first). */
  beforeWorkItemId?: number;
  limit: number;
}

/** A batch claimed by one bot run, with the items still to file. */
export interface ClaimedBatch {
  companyId: number;
  workBatchId: number;
  workType: string;
  leaseOwner: string;
  leaseExpiresAt: string;
}

/** What the bot records for one item after talking to the authority. */
export type ItemOutcome =
  | { kind: "succeeded"; result: WorkItemResult }
  | { kind: "failed"; error: WorkItemError }
  /** Transient: stays New, attempts + 1, not before `nextAttemptAt`. */
  | { kind: "retry"; nextAttemptAt: string; lastError: string };

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
  /** The company's `whsec_` webhook signing secret, or undefined when none was made yet. */
  getWebhookSecret(companyId: number): Promise<string | undefined>;
  setWebhookSecret(companyId: number, secret: string): Promise<void>;
  /** Shared HS256 key when none is configured, so every process of one database agrees. */
  getOrCreateSigningSecret(candidate: string): Promise<string>;

  // Intake and reads (API).
  addWorkItem(input: NewWorkItem): Promise<AddWorkItemOutcome>;
  getWorkItem(companyId: number, workItemId: number): Promise<WorkItemView | undefined>;
  getWorkBatch(companyId: number, workBatchId: number): Promise<WorkBatchView | undefined>;
  listWorkItems(companyId: number, query: ListWorkItemsQuery): Promise<WorkItemView[]>;

  /** Row totals across all companies; tests use them to prove a refused request stored nothing. */
  countRows(): Promise<RowCounts>;
}

/** The per-row result of `countRows`, for tests that prove a rejected request stored nothing. */
export interface RowCounts {
  companies: number;
  apiKeys: number;
  workBatches: number;
  workItems: number;
  idempotencyKeys: number;
}

/** A create that collides with an existing row (e.g. a company id already taken). */
export class AlreadyExistsError extends Error {
  override name = "AlreadyExistsError";
}
