/**
 * The filing queue (SPEC §14), the store's side of the bot: the items it claims from the queue and
 * gives back. What it records of their calls is outcomes.ts.
 */
import type { WorkItemKind, WorkItemStatus } from "../../domain/views.ts";

/**
 * An item the bot took from the filing queue to hand to the authority: `InProgress`, held by
 * the claim's owner until its lease runs out.
 */
export interface DueItem {
  companyId: number;
  workBatchId: number;
  workItemId: number;
  /** The store's generation when the item was added: its number, and its id (none for items added before migration 0020); with the item's id, they make its idempotency key (authority/protocol.ts). */
  storeGeneration: number;
  generationId: string | null;
  /** The W3C trace context of its intake (SPEC §17), the parent of the call's span; none when it was added untraced. */
  traceParent: string | null;
  workType: string;
  request: Record<string, unknown>;
  /** Transient failures so far. */
  attempts: number;
  deadlineAt: string | null;
  /** A change or withdrawal (SPEC §15) is filed against its original's application number. */
  kind: WorkItemKind;
  original: { workItemId: number; applicationNumber: string | null; status: WorkItemStatus } | null;
  /** Its company's turn in the queue, as the claim moved it: a call not made gives it back (releaseItems). */
  turn: CompanyTurn;
}

/**
 * Within one deadline, companies take turns (SPEC §14): a claim moves each company it served from
 * `before` to `after`, the back of the line.
 */
export interface CompanyTurn {
  before: number;
  after: number;
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
  /** As DueItem.traceParent. */
  traceParent: string | null;
}


/** An item held by a worker's claim: what fences the writes about its call. */
export interface ItemClaim {
  companyId: number;
  workItemId: number;
  /** The worker that holds it. */
  owner: string;
}

/** The bot (SPEC §5, §10, §14): one filing queue over every company. */
export interface FilingQueueStore {
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
   * Gives back claimed items whose call was not made (the breaker opened, the worker stops), in
   * their place, no attempt spent (InProgress → New; Submitted stays): due from `dueAt` (no
   * later than the `dueBefore` they were claimed under, so the pass that claimed them can take
   * them again), and a filing item's company gets back the turn its claim took (`turn`), unless a
   * later claim has served the company since. Items no longer held by their owner are left alone.
   * Returns how many were given back.
   */
  releaseItems(claims: Array<ItemClaim & { turn?: CompanyTurn }>, input: { now: string; dueAt: string; reason: string }): Promise<number>;
  /**
   * Items of the company, still New or InProgress, whose deadline is at or before
   * `riskBefore` and that were not flagged yet: flagged now, each emitting
   * `workitem.deadline_at_risk` (SPEC §10) once, recorded as in `recordItemOutcome`. Returns how many.
   */
  flagDeadlinesAtRisk(companyId: number, input: { riskBefore: string; now: string }): Promise<number>;
}
