/** The webhook deliveries surface (SPEC §11.3). Every route in it runs behind the bearer guard. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import * as listDeliveries from "./list-deliveries.ts";
import * as redeliver from "./redeliver.ts";

export const routes = [listDeliveries, redeliver];

export async function registerWebhooks(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (surface) => {
    surface.addHook("onRequest", ctx.bearerGuard);
    for (const route of routes) route.register(surface, ctx);
  });
}
