/**
 * GET /console/find?q=: the header's "Find" (SPEC §16). A work item id, an application number or
 * a registration number leads to the item's page; a number several items share, to the list of
 * them; nothing found, to a page saying so, with status 404.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import { html, queryString } from "./html.ts";
import { page } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { viewerOf } from "./security.ts";

const FIND_MAX_LENGTH = 200;
/** The query parameters the page reads. */
export const FIND_QUERY = ["q"] as const;

export function registerFindPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/find", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const text = queryFields(request.query, FIND_QUERY).q?.trim() ?? "";
    if (text.length === 0 || text.length > FIND_MAX_LENGTH) throw new ApiError("VALIDATION_FAILED", `Find takes a work item id, an application number or a registration number (at most ${FIND_MAX_LENGTH} characters).`);

    const workItemId = positiveInteger(text);
    if (workItemId !== undefined && (await ctx.store.getWorkItemTimeline(workItemId))) return reply.redirect(`/console/work-items/${workItemId}`, 303);
    for (const field of ["applicationNumber", "registrationNumber"] as const) {
      const items = await ctx.store.listAllWorkItems({ [field]: text, limit: 2 });
      if (items.length === 1) return reply.redirect(`/console/work-items/${items[0]!.workItemId}`, 303);
      if (items.length > 1) return reply.redirect(`/console/work-items${queryString({ [field]: text })}`, 303);
    }
    const body = html`<p>No work item has the id, application number or registration number <strong>${text}</strong>.</p>
<p>Look for it by customer reference in <a href="/console/work-items${queryString({ customerReference: text })}">Work items</a>.</p>`;
    return reply.code(404).type("text/html; charset=utf-8").send(page(viewer, "none", "Nothing found", body).markup);
  });
}
