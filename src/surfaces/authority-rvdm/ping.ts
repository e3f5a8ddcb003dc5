/** GET /api/AuthorityRvdm/Ping: the surface is reachable with the caller's credentials. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../../app-context.ts";
import { registerPing } from "../shared/ping.ts";

export function register(app: FastifyInstance, ctx: AppContext): void {
  registerPing(app, ctx, "/api/AuthorityRvdm/Ping", "AuthorityRvdm", "AuthorityRvdmPing");
}
