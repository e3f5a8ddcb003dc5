/** What a call to the authority made of a claimed item (SPEC §5, §10), recorded under its claim. */
import type { WorkItemError, WorkItemResult } from "../../domain/views.ts";
import type { ItemClaim } from "./filing-queue.ts";

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
  | { kind: "retried"; nextAttemptAt: string; lastError: string }
  /**
   * A change or withdrawal the Authority accepted: Successful, and its original takes it (the
   * changes and a revision more, or Withdrawn), with `workitem.changed` or `workitem.withdrawn`.
   */
  | { kind: "applied" };

/** The bot's record of its calls. */
export interface OutcomesStore {
  /**
   * In one transaction, moves a claimed item to its outcome (see ItemOutcome) and records the
   * event it emits (Successful, Failed and the first pending): in the feed (`listEvents`), and as
   * a `webhook_outbox` row with the same event id when the item has a webhook_url. The batch
   * completes with its last item. False, with nothing changed, when `claim.owner` no longer
   * holds the item (another worker took it over) or it is not in the state the outcome comes from.
   */
  recordItemOutcome(claim: ItemClaim, outcome: ItemOutcome, input: { now: string }): Promise<boolean>;
}
