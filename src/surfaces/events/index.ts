/** The event feed surface (SPEC §11.2), behind the bearer guard. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import * as listEvents from "./list-events.ts";

export const routes = [listEvents];

export async function registerEvents(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (surface) => {
    surface.addHook("onRequest", ctx.bearerGuard);
    for (const route of routes) route.register(surface, ctx);
  });
}
