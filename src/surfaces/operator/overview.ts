/** GET /api/Operator/Overview (SPEC §12.2): every company with its counts, and the bot as a whole. */
import { Type, type TSchema } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { WorkBatchCounts } from "../../domain/views.ts";
import { buildOverview } from "../../operators/overview.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity } from "./schemas.ts";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = (description: string) => Type.String({ format: "date-time", description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

const CompanyOverview = Type.Object(
  {
    companyId: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    counts: WorkBatchCounts,
    openBatchItems: Count("items in the company's Open batches"),
    oldestNewAt: Nullable(Timestamp("when the oldest item still New was accepted")),
    failedLast24h: Count("items that failed in the last 24 hours"),
    pendingWebhookDeliveries: Count("webhook deliveries still to deliver"),
  },
  { title: "OperatorCompanyOverview" },
);

const BotPassSummary = Type.Object(
  {
    startedAt: Timestamp("when the pass started"),
    finishedAt: Timestamp("when it ended"),
    submitted: Count("items filed with the authority"),
    succeeded: Count("items registered"),
    failed: Count("items rejected or given up"),
    retried: Count("transient failures, to be tried again"),
  },
  { title: "BotPassSummary" },
);

export const OperatorOverview = Type.Object(
  {
    companies: Type.Array(CompanyOverview),
    bot: Type.Object({
      lastPass: Nullable(BotPassSummary),
      nextPassAt: Nullable(Timestamp("when the schedule next starts a pass")),
      pausedWorkTypes: Type.Array(Type.String(), { description: "work types the bot does not file now" }),
      breaker: Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("halfOpen")], { description: "the shared circuit breaker in front of the authority" }),
    }),
  },
  {
    title: "OperatorOverview",
    description: "every company with its item counts, and the bot as a whole",
    examples: [
      {
        companies: [
          {
            companyId: 42,
            name: "Acme Transport",
            counts: { new: 3, inProgress: 0, submitted: 1, successful: 812, failed: 4, cancelled: 2 },
            openBatchItems: 3,
            oldestNewAt: "2026-11-23T09:58:00.000Z",
            failedLast24h: 1,
            pendingWebhookDeliveries: 0,
          },
        ],
        bot: {
          lastPass: { startedAt: "2026-11-23T10:00:00.012Z", finishedAt: "2026-11-23T10:00:01.904Z", submitted: 5, succeeded: 4, failed: 1, retried: 0 },
          nextPassAt: "2026-11-23T10:01:00.000Z",
          pausedWorkTypes: [],
          breaker: "closed",
        },
      },
    ],
  },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get("/api/Operator/Overview", {
    schema: {
      summary: "Every company with its item counts, and the bot: last pass, next pass, paused work types, breaker",
      operationId: "OperatorOverview",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      response: { 200: OperatorOverview, ...operatorResponses() },
    },
    handler: () => buildOverview(ctx.store, ctx.config),
  });
}
