/** GET /api/Operator/Overview (SPEC §12.2, §14): every company with its counts, the queue by deadline, and the bot as a whole. */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { Nullable, WorkBatchCounts } from "../../domain/views.ts";
import { buildOverview, NEXT_DEADLINES, THROUGHPUT_HOURS } from "../../operators/overview.ts";
import { OPERATOR_TAG, operatorResponses, operatorSecurity } from "./schemas.ts";

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
    retryingWebhookDeliveries: Count("of the pending webhook deliveries, those whose last attempt failed (no 2xx answer): they are being retried"),
    overdue: Count("New items whose deadlineAt has passed"),
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

const DeadlineLoad = Type.Object(
  {
    deadlineAt: Timestamp("the deadline"),
    unsubmitted: Count("New items due at it"),
    companies: Count("the companies those items belong to"),
  },
  { title: "OperatorDeadlineLoad" },
);

const Deadlines = Type.Object(
  {
    overdue: Count("New items whose deadlineAt has passed"),
    next: Type.Array(DeadlineLoad, { maxItems: NEXT_DEADLINES, description: `the next ${NEXT_DEADLINES} distinct deadlines (deadlineAt now or later) with New items, earliest first` }),
  },
  { title: "OperatorDeadlines", description: "the items still to be filed, by deadline, over all companies" },
);

const ThroughputHour = Type.Object(
  {
    hour: Timestamp("the UTC start of the hour"),
    submitted: Count("items filed with the authority in the hour (their authority.submittedAt)"),
    succeeded: Count("items that became Successful in the hour (their completedAt)"),
    failed: Count("items that became Failed in the hour and were not retried since"),
    deliveriesFailed: Count("webhook deliveries given up or stopped in the hour"),
    deliveryAttemptsFailed: Count("webhook delivery attempts in the hour that got no 2xx answer, retried since or not: a failing receiver shows here before any delivery is given up"),
  },
  { title: "OperatorThroughputHour" },
);

export const OperatorOverview = Type.Object(
  {
    companies: Type.Array(CompanyOverview),
    deadlines: Deadlines,
    throughput: Type.Array(ThroughputHour, {
      minItems: THROUGHPUT_HOURS,
      maxItems: THROUGHPUT_HOURS,
      description: `the last ${THROUGHPUT_HOURS} hours, oldest first, the last one the hour now is in`,
    }),
    bot: Type.Object({
      submittedLastHour: Count("items filed with the authority in the last hour (their authority.submittedAt)"),
      lastPass: Nullable(BotPassSummary),
      nextPassAt: Nullable(Timestamp("when the schedule next starts a pass")),
      pausedWorkTypes: Type.Array(Type.String(), { description: "work types the bot does not file now" }),
      breaker: Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("halfOpen")], { description: "the shared circuit breaker in front of the authority" }),
      breakerReason: Nullable(
        Type.String({
          description: "why filing stopped when the authority refused our calls themselves (401, 403, 404, 405 at submit: check AUTHORITY_URL and the credentials); null when the breaker is closed or opened for failures in a row",
        }),
      ),
    }),
    shardGroupsUnreachable: Count(
      "shard groups of a Citus store whose worker node does not answer: their companies are missing from companies, deadlines and throughput until it is back; 0 on one PostgreSQL or SQLite",
    ),
  },
  {
    title: "OperatorOverview",
    description: "every company with its item counts, the items still to be filed by deadline, and the bot as a whole",
    examples: [
      {
        companies: [
          {
            companyId: 42,
            name: "Acme Transport",
            counts: { new: 3, inProgress: 0, submitted: 1, successful: 812, failed: 4, cancelled: 2, withdrawn: 0 },
            openBatchItems: 3,
            oldestNewAt: "2026-11-23T09:58:00.000Z",
            failedLast24h: 1,
            pendingWebhookDeliveries: 0,
            retryingWebhookDeliveries: 0,
            overdue: 0,
          },
        ],
        deadlines: {
          overdue: 0,
          next: [
            { deadlineAt: "2026-11-23T11:00:00.000Z", unsubmitted: 2, companies: 1 },
            { deadlineAt: "2026-11-24T11:00:00.000Z", unsubmitted: 1, companies: 1 },
          ],
        },
        throughput: Array.from({ length: THROUGHPUT_HOURS }, (_, index) => ({
          hour: new Date(Date.UTC(2026, 10, 22, 11 + index)).toISOString(),
          submitted: index === THROUGHPUT_HOURS - 1 ? 58 : 0,
          succeeded: index === THROUGHPUT_HOURS - 1 ? 57 : 0,
          failed: index === THROUGHPUT_HOURS - 1 ? 1 : 0,
          deliveriesFailed: 0,
          deliveryAttemptsFailed: 0,
        })),
        bot: {
          submittedLastHour: 58,
          lastPass: { startedAt: "2026-11-23T10:00:00.012Z", finishedAt: "2026-11-23T10:00:01.904Z", submitted: 5, succeeded: 4, failed: 1, retried: 0 },
          nextPassAt: "2026-11-23T10:01:00.000Z",
          pausedWorkTypes: [],
          breaker: "closed",
          breakerReason: null,
        },
        shardGroupsUnreachable: 0,
      },
    ],
  },
);

export function register(app: FastifyInstance, ctx: AppContext): void {
  app.get("/api/Operator/Overview", {
    schema: {
      summary: "Every company with its item counts, the New items by deadline, the throughput of the last 24 hours, and the bot: its last hour, last pass, next pass, paused work types, breaker",
      operationId: "OperatorOverview",
      tags: [OPERATOR_TAG],
      security: operatorSecurity,
      response: { 200: OperatorOverview, ...operatorResponses() },
    },
    handler: () => buildOverview(ctx.store, ctx.config),
  });
}
