/**
 * What AddWorkItemChange and AddWorkItemWithdraw share (SPEC §15): the fields every change and
 * withdrawal carries, and the path from a validated body to the store and back, with the same
 * webhook guard, Idempotency-Key and answers as AddWorkItemCreate.
 */
import type { TProperties } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { BatchKey, WORK_TYPE_AUTHORITY_RVDM } from "../../domain/views.ts";
import { FOLLOW_UP_RULES } from "../../domain/work-item-kinds.ts";
import { ApiError } from "../../errors.ts";
import type { AddFollowUpOutcome, NewFollowUp } from "../../store/store.ts";
import { PositiveId } from "../shared/ids.ts";
import { hashBody, holdingIdempotencyKey, idempotencyRecord, IdempotencyReplayedHeader, keyReused } from "../shared/idempotency.ts";
import { AuthorityRvdmWorkItemCreate, webhookTargetErrors } from "./add-work-item-create.ts";
import { workItemNotFound } from "./get-work-item.ts";
import { requestTraceParent } from "../../telemetry/request-span.ts";

/** The fields of a change or withdrawal besides what it changes: its original and the create's own references. */
export const followUpFields = {
  originalWorkItemId: PositiveId("the create item whose document this changes or withdraws"),
  customerReference: AuthorityRvdmWorkItemCreate.properties.customerReference,
  documentReference: AuthorityRvdmWorkItemCreate.properties.documentReference,
  webhookUrl: AuthorityRvdmWorkItemCreate.properties.webhookUrl,
} satisfies TProperties;

/** The 200: the batch key, and the header that says it is the first answer again. */
export const FollowUpAddedResponse = {
  description: "where the change or withdraw item landed",
  headers: IdempotencyReplayedHeader,
  content: { "application/json": { schema: BatchKey, example: { workBatchId: 18, workItemId: 4712 } } },
};

type FollowUpBody = { originalWorkItemId: number; customerReference: string; documentReference?: string; webhookUrl?: string };

/** Stores the change or withdrawal and answers as an add does; every refusal as a problem. */
export async function addFollowUp(
  ctx: AppContext,
  request: FastifyRequest & { tenant: { companyId: number }; headers: { "idempotency-key"?: string } },
  reply: FastifyReply,
  body: FollowUpBody,
  details: Pick<NewFollowUp, "kind" | "changes" | "movedDeadlineAt">,
): Promise<BatchKey> {
  const { companyId } = request.tenant;
  if (body.webhookUrl !== undefined) {
    const errors = await webhookTargetErrors(body.webhookUrl, ctx);
    if (errors) throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors });
  }
  const key = request.headers["idempotency-key"];
  return holdingIdempotencyKey(ctx, companyId, key, async () => {
    const outcome = await ctx.store.addFollowUp({
      companyId,
      workType: WORK_TYPE_AUTHORITY_RVDM,
      batchMaxItems: ctx.config.batchMaxItems,
      originalWorkItemId: body.originalWorkItemId,
      customerReference: body.customerReference,
      documentReference: body.documentReference ?? null,
      webhookUrl: body.webhookUrl ?? null,
      request: body,
      changeCutoffMs: ctx.config.changeCutoffMs,
      now: new Date().toISOString(),
      traceParent: requestTraceParent(request),
      ...details,
      ...(key === undefined ? {} : { idempotency: idempotencyRecord(key, hashBody(body)) }),
    });
    if (outcome.kind !== "created" && outcome.kind !== "replayed") throw refusal(outcome, body.originalWorkItemId, details.kind);
    if (outcome.kind === "replayed") reply.header("idempotency-replayed", "true");
    else ctx.metrics.workItemsCreated.inc({ work_type: WORK_TYPE_AUTHORITY_RVDM });
    return outcome.key;
  });
}

function refusal(outcome: Exclude<AddFollowUpOutcome, { kind: "created" | "replayed" }>, originalId: number, kind: NewFollowUp["kind"]): ApiError {
  const what = FOLLOW_UP_RULES[kind].done;
  switch (outcome.kind) {
    case "keyReused":
      return keyReused();
    case "originalNotFound":
      return workItemNotFound(originalId);
    case "notAnOriginal":
      return new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", {
        errors: { originalWorkItemId: [`names a ${outcome.originalKind} item; only a create item's document can be ${what}`] },
      });
    case "refused": {
      const why = {
        ORIGINAL_CLOSED: `work item ${originalId} is ${outcome.originalStatus}`,
        WITHDRAWAL_PENDING: `work item ${originalId} has a withdrawal that has not failed`,
        CHANGE_CUTOFF_PASSED: `the transport of work item ${originalId} is less than the change cutoff away (CHANGE_CUTOFF_HOURS before its exportDate, or before the new one)`,
      }[outcome.code];
      return new ApiError("STATE_CONFLICT", `The document cannot be ${what}: ${why}.`, { reason: outcome.code });
    }
  }
}
