/** Unauthenticated operator routes: liveness and readiness. */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { ApiError } from "../../errors.ts";
import { problemResponses } from "../shared/problem-schema.ts";

const Status = Type.Object({ status: Type.String({ examples: ["ok"] }) });

export async function registerOps(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get("/healthz", {
    schema: { summary: "200 while the process runs", tags: ["Operations"], response: { 200: Status } },
    handler: async () => ({ status: "ok" }),
  });
  app.get("/readyz", {
    schema: { summary: "200 when the store answers, else 503", tags: ["Operations"], response: { 200: Status, ...problemResponses(503) } },
    handler: async () => {
      try {
        await ctx.store.ping();
      } catch {
        throw new ApiError("STORE_UNAVAILABLE", "The store does not answer.", { headers: { "retry-after": "2" } });
      }
      return { status: "ready" };
    },
  });
}
