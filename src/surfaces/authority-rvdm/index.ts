/** The Authority RVDM surface. Every route in it runs behind the bearer guard. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import type { FollowUpKind } from "../../domain/work-item-kinds.ts";
import * as addWorkItemCreate from "./add-work-item-create.ts";
import * as addWorkItemChange from "./add-work-item-change.ts";
import * as addWorkItemCreateBulk from "./add-work-item-create-bulk.ts";
import * as addWorkItemWithdraw from "./add-work-item-withdraw.ts";
import * as cancelWorkItem from "./cancel-work-item.ts";
import * as getWorkBatch from "./get-work-batch.ts";
import * as getWorkItem from "./get-work-item.ts";
import * as listWorkItems from "./list-work-items.ts";
import * as ping from "./ping.ts";

/** Each kind of follow-up has its route (SPEC §15): AddWorkItem<Kind>. */
const FOLLOW_UP_ROUTES: Record<FollowUpKind, { register(app: FastifyInstance, ctx: AppContext): void }> = { change: addWorkItemChange, withdraw: addWorkItemWithdraw };

export const routes = [ping, addWorkItemCreate, addWorkItemCreateBulk, ...Object.values(FOLLOW_UP_ROUTES), getWorkItem, getWorkBatch, listWorkItems, cancelWorkItem];

export async function registerAuthorityRvdm(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (surface) => {
    surface.addHook("onRequest", ctx.bearerGuard);
    for (const route of routes) route.register(surface, ctx);
  });
}
