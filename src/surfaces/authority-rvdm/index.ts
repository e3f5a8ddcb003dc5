/** The Authority RVDM surface. Every route in it runs behind the bearer guard. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import * as addWorkItemCreate from "./add-work-item-create.ts";
import * as addWorkItemCreateBulk from "./add-work-item-create-bulk.ts";
import * as cancelWorkItem from "./cancel-work-item.ts";
import * as followUps from "./follow-ups.ts";
import * as getWorkBatch from "./get-work-batch.ts";
import * as getWorkItem from "./get-work-item.ts";
import * as listWorkItems from "./list-work-items.ts";
import * as ping from "./ping.ts";

/** `followUps`: AddWorkItem<Kind>, a route for each kind of follow-up (SPEC §15). */
export const routes = [ping, addWorkItemCreate, addWorkItemCreateBulk, followUps, getWorkItem, getWorkBatch, listWorkItems, cancelWorkItem];

export async function registerAuthorityRvdm(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (surface) => {
    surface.addHook("onRequest", ctx.bearerGuard);
    for (const route of routes) route.register(surface, ctx);
  });
}
