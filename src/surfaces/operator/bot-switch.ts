/**
 * POST /api/Operator/Bot/Pause and /Resume (SPEC §12.2): whether the bot files a work type.
 * Intake goes on while it is paused. The state is in the store, so every worker and
 * `bot run-once` obey it from their next pass.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WORK_TYPES } from "../../domain/views.ts";
import { operatorAction, requireActingRole } from "../../operators/operator-guard.ts";
import { OneOf, OPERATOR_TAG, operatorResponses, operatorSecurity, Reason } from "./schemas.ts";

const WorkType = OneOf(WORK_TYPES, { description: "a work type the bot files", examples: [WORK_TYPES[0]] });

export const OperatorBotSwitch = Type.Object(
  { workType: WorkType, reason: Reason },
  { title: "OperatorBotSwitch", additionalProperties: false, examples: [{ workType: WORK_TYPES[0], reason: "authority maintenance window 22:00–23:00" }] },
);
type OperatorBotSwitch = Static<typeof OperatorBotSwitch>;

export const OperatorWorkTypeState = Type.Object(
  { workType: Type.String({ examples: [WORK_TYPES[0]] }), paused: Type.Boolean({ description: "true: the bot does not file items of this work type" }) },
  { title: "OperatorWorkTypeState", description: "whether the bot files a work type now", examples: [{ workType: WORK_TYPES[0], paused: true }] },
);

export function registerBotSwitch(app: FastifyInstance, ctx: AppContext, paused: boolean): void {
  const verb = paused ? "Pause" : "Resume";
  app.post<{ Body: OperatorBotSwitch }>(`/api/Operator/Bot/${verb}`, {
    schema: {
      summary: paused ? "Stop the bot filing a work type (intake goes on)" : "Let the bot file a paused work type again",
      description: "Every worker and `bot run-once` obey it from their next pass.",
      operationId: `Operator${verb}Bot`,
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      body: OperatorBotSwitch,
      response: { 200: OperatorWorkTypeState, ...operatorResponses(400, 413, 415) },
    },
    onRequest: requireActingRole,
    handler: async (request) => {
      const { workType, reason } = request.body;
      await ctx.store.setWorkTypePaused(workType, paused, operatorAction(request, reason));
      return { workType, paused };
    },
  });
}
