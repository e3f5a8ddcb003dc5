/** GET /api/VlmMad/Ping: the VlmMad surface's liveness route, behind the same guard. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { registerPing } from "../shared/ping.ts";

export async function registerVlmMad(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (surface) => {
    surface.addHook("onRequest", ctx.bearerGuard);
    registerPing(surface, ctx, "/api/VlmMad/Ping", "VlmMad", "VlmMadPing");
  });
}
