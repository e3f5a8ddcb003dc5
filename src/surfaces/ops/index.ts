/**
 * Unauthenticated routes for the platform: liveness, readiness and Prometheus metrics. Every
 * process serves them, a ROLE=worker one on a listener of its own (buildProbeApp in app.ts).
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { publicResponses } from "../../http/problem-schema.ts";

/** Bodies of /healthz and /readyz. */
const Status = (title: string, example: string, description: string) =>
  Type.Object({ status: Type.String({ examples: [example] }) }, { title, description, examples: [{ status: example }] });
export const HealthStatus = Status("HealthStatus", "ok", "the process runs");
export const ReadyStatus = Status("ReadyStatus", "ready", "the store answers");

const METRICS_EXAMPLE = [
  "# HELP work_item_api_tokens_issued_total Bearer tokens issued by POST /api/Login/Authenticate",
  "# TYPE work_item_api_tokens_issued_total counter",
  "work_item_api_tokens_issued_total 1",
].join("\n");

/** What the probes and /metrics read: a worker's listener has these and nothing else of the API. */
export type OpsContext = Pick<AppContext, "config" | "store" | "metrics">;

export async function registerOps(app: FastifyInstance, ctx: OpsContext): Promise<void> {
  app.get("/healthz", {
    schema: { summary: "200 while the process runs", operationId: "GetHealth", tags: ["Service"], security: [], response: { 200: HealthStatus, ...publicResponses() } },
    handler: async () => ({ status: "ok" }),
  });
  app.get("/readyz", {
    schema: {
      summary: "200 when the store answers, else 503",
      operationId: "GetReadiness",
      tags: ["Service"],
      security: [],
      response: { 200: ReadyStatus, ...publicResponses(503) },
    },
    handler: async () => {
      try {
        await ctx.store.ping();
      } catch {
        throw new ApiError("STORE_UNAVAILABLE", "The store does not answer.", { headers: { "retry-after": "2" } });
      }
      return { status: "ready" };
    },
  });
  if (!ctx.config.metricsEnabled) return;
  app.get("/metrics", {
    schema: {
      summary: "Prometheus metrics (text exposition format)",
      operationId: "GetMetrics",
      tags: ["Service"],
      security: [],
      response: {
        200: { description: "every work_item_api_* metric", content: { "text/plain": { schema: Type.String(), example: METRICS_EXAMPLE } } },
        ...publicResponses(),
      },
    },
    handler: async (_request, reply) => {
      const { contentType, body } = await ctx.metrics.render();
      return reply.type(contentType).send(body);
    },
  });
}
