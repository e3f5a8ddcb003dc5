/**
 * Changing and withdrawing a document (SPEC §15): a change or withdraw item stored in the
 * company's Open batch, applied to its original at once when the original is not sent yet, and
 * what an accepted change or withdrawal does to the original once the bot filed it.
 *
 * Locks, in the order the rest of the store takes them: the company's Open batch (as intake and
 * the bot's close do), then the original's row, then the rows a change moves; the events last.
 * The original can only be New in an Open batch if that batch is the one locked, so the bot
 * cannot close it half-way through.
 */
import type { DatabasePort, Queryable } from "../port.ts";
import { iso, storedRequest, type WorkItemRow } from "../rows.ts";
import type { AddFollowUpOutcome, FollowUpRefusal, ItemClaim, NewFollowUp } from "../store.ts";
import type { DocumentChangeResult, WorkItemStatus } from "../../domain/views.ts";
import { FOLLOW_UP_RULES, isFollowUp, type FollowUpKind } from "../../domain/work-item-kinds.ts";
import { FOLLOW_UPS_SQL } from "./sql-follow-ups.ts";
import { WORK_ITEMS_SQL } from "./sql-work-items.ts";
import { countIntoBatch, openBatchFor } from "./batches.ts";
import { emitPending, recordHistory, transition, type MovedRow, type PendingEvents } from "./transition.ts";

const CLOSED = new Set<WorkItemStatus>(["Cancelled", "Failed", "Withdrawn"]);

type Original = WorkItemRow & { batch_status: string; withdrawals_pending: number | string };

export function addFollowUp(db: DatabasePort, input: NewFollowUp): Promise<AddFollowUpOutcome> {
  return db.transaction(async (tx) => {
    const { companyId, now } = input;
    const known = await knownKey(tx, input);
    if (known) return known;
    const workBatchId = await openBatchFor(tx, input);
    const original = await tx.one<Original>(FOLLOW_UPS_SQL.lockOriginal, [companyId, input.originalWorkItemId]);
    if (!original) return { kind: "originalNotFound" };
    if (original.kind !== "create") return { kind: "notAnOriginal", originalKind: original.kind };
    const refusal = refusalFor(original, input);
    if (refusal) return { kind: "refused", ...refusal };

    const notSent = original.status === "New" && original.batch_status === "Open";
    const deadlineAt = notSent ? null : cutoffOf(original, input);
    const inserted = await tx.one<{ work_item_id: number | string }>(FOLLOW_UPS_SQL.insertFollowUp, [
      companyId,
      workBatchId,
      input.workType,
      input.customerReference,
      input.documentReference,
      input.webhookUrl,
      JSON.stringify(input.request),
      deadlineAt,
      now,
      input.kind,
      input.originalWorkItemId,
      input.traceParent ?? null,
    ]);
    const workItemId = Number(inserted!.work_item_id);
    await countIntoBatch(tx, companyId, workBatchId);
    if (input.idempotency) {
      const { key, requestHash } = input.idempotency;
      await tx.run(FOLLOW_UPS_SQL.insertIdempotencyKey, [companyId, key, requestHash, workBatchId, workItemId, now]);
    }
    const { noun, revises } = FOLLOW_UP_RULES[input.kind];
    const events: PendingEvents = [];
    if (notSent) {
      // The item first, so the original closing (a withdrawal) finds no change or withdrawal waiting.
      const result = revises ? { revision: Number(original.revision) + 1 } : {};
      await transition(
        tx,
        FOLLOW_UPS_SQL.followUpSucceeded,
        [companyId, workItemId, JSON.stringify({ appliedBeforeFiling: true, ...result }), now],
        { companyId, now, from: "New", history: [{ kind: "status", status: "Successful", detail: `${noun} applied to ${input.originalWorkItemId} before it was filed` }], event: "workitem.succeeded" },
        events,
      );
      await APPLIED[input.kind](tx, { companyId, workItemId, originalWorkItemId: input.originalWorkItemId, changes: input.changes, movedDeadlineAt: input.movedDeadlineAt }, now, "before filing", events);
    } else {
      await recordHistory(tx, companyId, input.originalWorkItemId, now, { kind: input.kind, detail: `${noun} ${workItemId} received; filed once the earlier ones are` });
    }
    await emitPending(tx, events);
    return { kind: "created", key: { workBatchId, workItemId } };
  });
}

/** A follow-up the original takes: what the Authority accepted, or what is applied before the original is filed. */
interface Taken {
  companyId: number;
  workItemId: number;
  originalWorkItemId: number;
  changes?: Record<string, unknown> | undefined;
  movedDeadlineAt?: string | null | undefined;
}
type TakenWhen = "before filing" | "by the Authority";
type DocumentResult = Omit<DocumentChangeResult, "appliedBeforeFiling">;

const takenDetail = (when: TakenWhen) => (when === "before filing" ? "applied before filing" : "accepted by the Authority");

/** What each kind of follow-up does to its original (SPEC §15). */
const APPLIED: Record<FollowUpKind, (tx: Queryable, followUp: Taken, now: string, when: TakenWhen, events: PendingEvents) => Promise<DocumentResult>> = {
  /** Before filing it cancels the original, as the integrator's cancel does; after, the original is Withdrawn. */
  async withdraw(tx, { companyId, workItemId, originalWorkItemId }, now, when, events) {
    const history = [{ kind: "withdraw" as const, detail: `Withdrawal ${workItemId} ${takenDetail(when)}` }];
    if (when === "before filing") {
      await transition(tx, WORK_ITEMS_SQL.cancelWorkItem, [companyId, originalWorkItemId, now], {
        companyId,
        now,
        from: "New",
        history: [...history, { kind: "status", status: "Cancelled", detail: `Withdrawn by ${workItemId} before it was filed` }],
      }, events);
    } else {
      await transition(tx, FOLLOW_UPS_SQL.withdrawOriginal, [companyId, originalWorkItemId, now], {
        companyId,
        now,
        from: (row) => (row.registration_number ? "Successful" : "Submitted"),
        history: [...history, { kind: "status", status: "Withdrawn" }],
        event: "workitem.withdrawn",
      }, events);
    }
    return {};
  },

  /** The original's document takes the changed fields, as a new revision. */
  async change(tx, { companyId, workItemId, originalWorkItemId, changes, movedDeadlineAt }, now, when, events) {
    const original = await tx.one<{ request: string | Record<string, unknown> }>(FOLLOW_UPS_SQL.originalRequest, [companyId, originalWorkItemId]);
    const current = storedRequest(original!.request);
    const changed = await tx.one<MovedRow>(FOLLOW_UPS_SQL.changeOriginal, [
      companyId,
      originalWorkItemId,
      JSON.stringify({ ...current, ...changes }),
      movedDeadlineAt ?? null,
      now,
    ]);
    const revision = Number(changed!.revision);
    await recordHistory(tx, companyId, originalWorkItemId, now, { kind: "change", detail: `Change ${workItemId} ${takenDetail(when)}: revision ${revision}` });
    events.push({ companyId, type: "workitem.changed", rows: [changed!], now });
    return { revision };
  },
};

/**
 * The bot's `applied` outcome for a change or withdraw item it holds: the item Successful and
 * the original changed or Withdrawn, in one transaction. False when the claim was lost.
 */
export async function recordApplied(tx: Queryable, claim: ItemClaim, now: string): Promise<boolean> {
  const followUp = await tx.one<WorkItemRow & { request: string | Record<string, unknown> }>(FOLLOW_UPS_SQL.lockClaimedFollowUp, [claim.companyId, claim.workItemId, claim.owner]);
  if (!followUp || followUp.original_work_item_id === null || !isFollowUp(followUp.kind)) return false;
  const request = storedRequest(followUp.request);
  const events: PendingEvents = [];
  const result = await APPLIED[followUp.kind](
    tx,
    { companyId: claim.companyId, workItemId: claim.workItemId, originalWorkItemId: Number(followUp.original_work_item_id), changes: request.changes as Record<string, unknown> | undefined },
    now,
    "by the Authority",
    events,
  );
  const done = await transition(
    tx,
    FOLLOW_UPS_SQL.claimedFollowUpSucceeded,
    [claim.companyId, claim.workItemId, claim.owner, JSON.stringify(result), now],
    { companyId: claim.companyId, now, from: "InProgress", history: [{ kind: "attempt", detail: "Accepted by the Authority" }, { kind: "status", status: "Successful" }], event: "workitem.succeeded" },
    events,
  );
  await emitPending(tx, events);
  return done !== undefined;
}

/** The unexpired record of the request's key: the first answer again, or keyReused. An expired one is deleted. */
async function knownKey(tx: Queryable, input: NewFollowUp): Promise<AddFollowUpOutcome | undefined> {
  const { idempotency } = input;
  if (!idempotency) return undefined;
  const row = await tx.one<{ request_hash: string; work_batch_id: number | string | null; work_item_id: number | string | null; created_at: string | Date }>(
    FOLLOW_UPS_SQL.findIdempotencyKey,
    [input.companyId, idempotency.key],
  );
  if (!row) return undefined;
  if (Date.parse(iso(row.created_at)) + idempotency.retentionSeconds * 1000 <= Date.parse(input.now)) {
    await tx.run(FOLLOW_UPS_SQL.deleteIdempotencyKey, [input.companyId, idempotency.key]);
    return undefined;
  }
  if (row.request_hash !== idempotency.requestHash || row.work_item_id === null || row.work_batch_id === null) return { kind: "keyReused" };
  return { kind: "replayed", key: { workBatchId: Number(row.work_batch_id), workItemId: Number(row.work_item_id) } };
}

/** Why the original cannot take this change or withdrawal now, if it cannot (SPEC §15). */
function refusalFor(original: Original, input: NewFollowUp): FollowUpRefusal | undefined {
  const status = original.status as WorkItemStatus;
  if (CLOSED.has(status)) return { code: "ORIGINAL_CLOSED", originalStatus: status };
  if (Number(original.withdrawals_pending) > 0) return { code: "WITHDRAWAL_PENDING", originalStatus: status };
  if (FOLLOW_UP_RULES[input.kind].cutoff && Date.parse(input.now) > cutoffMs(original, input)) return { code: "CHANGE_CUTOFF_PASSED", originalStatus: status };
  return undefined;
}

const exportDateOf = (request: WorkItemRow["request"]): number => {
  const value = storedRequest(request).exportDate;
  return typeof value === "string" ? Date.parse(value) : Number.NaN;
};

/** The change cutoff: CHANGE_CUTOFF_HOURS before the original's exportDate, or the new one's when earlier. */
function cutoffMs(original: Original, input: NewFollowUp): number {
  const exportDates = [exportDateOf(original.request)];
  const moved = input.changes?.exportDate;
  if (typeof moved === "string") exportDates.push(Date.parse(moved));
  const valid = exportDates.filter(Number.isFinite);
  return valid.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...valid) - input.changeCutoffMs;
}

/** A filed change or withdrawal is due by the change cutoff. */
function cutoffOf(original: Original, input: NewFollowUp): string | null {
  const at = cutoffMs(original, input);
  return Number.isFinite(at) ? new Date(at).toISOString() : null;
}
