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
 * Every method is written once, in core/, over the database port (port.ts); the backend
 * folders hold only what differs. Backend differences are named as `StoreFlags`, never as
 * `if (postgres)` outside this folder.
 *
 * The interface is made of one part per area, each with its types in a file of types/, its
 * implementation in core/ and its statements in core/sql-<area>.ts, all under the area's one name:
 * accounts (companies and keys), work-items (adds and reads), follow-ups (changes and
 * withdrawals), filing-queue (what the bot claims), outcomes (what its calls made of items),
 * capacity (the authority's slots), breaker (its circuit breaker), webhooks, events (the feed),
 * operators (their accounts), operator-reads, operator-items and operator-actions (what operators
 * read, list and do), erasure (items past their retention), company-erasure (a company that
 * leaves), export (its items as it takes them along) and storage (its size, and the space
 * erases free, SPEC §22).
 * Import them from here.
 */
import type { SchemaStatus } from "./migrations.ts";
import type { AccountsStore } from "./types/accounts.ts";
import type { BreakerStore } from "./types/breaker.ts";
import type { CapacityStore } from "./types/capacity.ts";
import type { CompanyErasureStore } from "./types/company-erasure.ts";
import type { ErasureStore } from "./types/erasure.ts";
import type { EventsStore } from "./types/events.ts";
import type { ExportStore } from "./types/export.ts";
import type { FilingQueueStore } from "./types/filing-queue.ts";
import type { FollowUpsStore } from "./types/follow-ups.ts";
import type { OperatorActionsStore } from "./types/operator-actions.ts";
import type { OperatorItemsStore } from "./types/operator-items.ts";
import type { OperatorReadsStore } from "./types/operator-reads.ts";
import type { OperatorsStore } from "./types/operators.ts";
import type { OutcomesStore } from "./types/outcomes.ts";
import type { StorageStore } from "./storage.ts";
import type { WebhooksStore } from "./types/webhooks.ts";
import type { WorkItemsStore } from "./types/work-items.ts";

export type * from "./types/accounts.ts";
export type * from "./types/breaker.ts";
export type * from "./types/capacity.ts";
export type * from "./types/company-erasure.ts";
export type * from "./types/erasure.ts";
export type * from "./types/events.ts";
export type * from "./types/export.ts";
export type * from "./types/filing-queue.ts";
export type * from "./types/follow-ups.ts";
export type * from "./types/operator-actions.ts";
export type * from "./types/operator-items.ts";
export type * from "./types/operator-reads.ts";
export type * from "./types/operators.ts";
export type * from "./types/outcomes.ts";
export type * from "./storage.ts";
export type * from "./types/webhooks.ts";
export type * from "./types/work-items.ts";
export type { WebhookEventType } from "../domain/event-types.ts";
export type { AppliedMigration, MigrationMode, SchemaStatus } from "./migrations.ts";

/** What differs between the backends, named so that no code outside this folder asks which one it has. */
export interface StoreFlags {
  /**
   * Writes are serialised through one lock (embedded SQLite): processes on one host take turns,
   * and throughput does not grow with more processes.
   */
  singleWriter: boolean;
  /** Concurrent workers can claim rows with `FOR UPDATE SKIP LOCKED`. */
  supportsSkipLocked: boolean;
  /**
   * A deleted row's id can be given again (SQLite's rowid without AUTOINCREMENT, once the largest
   * rows go): an erase records the largest id it deleted, which new rows then go past
   * (`Dialect.newId`, SPEC §22).
   */
  reusesIds: boolean;
}

/**
 * A store's deployment, made with it and kept in its copies, and its generation: a number that a
 * restore raises, and a random id no other generation of any store has (SPEC §18, §24).
 */
export interface StoreIdentity {
  deploymentId: string;
  generation: number;
  /** None at generation 0 (never restored): new items are keyed by their id alone. */
  generationId: string | null;
}

/** The whole store: what it is and how to reach it, and the methods of every area. */
export interface Store
  extends AccountsStore,
    WorkItemsStore,
    FollowUpsStore,
    FilingQueueStore,
    OutcomesStore,
    CapacityStore,
    BreakerStore,
    WebhooksStore,
    EventsStore,
    OperatorsStore,
    OperatorReadsStore,
    OperatorItemsStore,
    OperatorActionsStore,
    ErasureStore,
    CompanyErasureStore,
    ExportStore,
    StorageStore {
  readonly kind: "sqlite" | "postgres";
  readonly flags: StoreFlags;

  /** Resolves when the database answers; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;
  /**
   * Shard groups of a sharded store (Citus) that the last read across companies could not
   * reach, whose companies' filing waits (SPEC §23); 0 on a store of one node.
   */
  shardGroupsUnreachable(): number;
  /** The schema's migrations against the ones this version knows (SPEC §18). */
  schemaStatus(): Promise<SchemaStatus>;
  /** Applies the pending migrations and answers the status after (`db migrate`, which runs alone). */
  migrate(): Promise<SchemaStatus>;
  /** Whose store this is and which generation (SPEC §24); null while the schema lacks migration 0020. */
  storeIdentity(): Promise<StoreIdentity | null>;
  close(): Promise<void>;
}
