/** GET /console/audit: every operator action, newest first, paged (SPEC §12.2); nothing here changes or deletes an entry. */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { ApiError } from "../errors.ts";
import type { AuditEntry } from "../store/store.ts";
import { companyLabel, companyNames, type CompanyNames } from "./company-names.ts";
import { html, queryString, type Html } from "./html.ts";
import { count, nextPageLink, page, time } from "./layout.ts";
import { positiveInteger, queryFields } from "./params.ts";
import { viewerOf } from "./security.ts";

const PAGE_SIZE = 50;
/** The query parameters the page reads. */
export const AUDIT_QUERY = ["cursor"] as const;

/** What was acted on, each part a link to where it is listed. */
function target(entry: AuditEntry, names: CompanyNames): Html {
  if (entry.signIn?.method === "oidc") return html`the console, through ${entry.signIn.issuer} as ${entry.signIn.subject}`;
  if (entry.signIn) return html`the console, with a password`;
  const { companyId, workItemId, workType, deliveryId } = entry.target;
  // Nothing of an erased company is left to link to.
  if (entry.action === "company.erased") return html`company #${companyId}, erased with its ${count(entry.items ?? 0)} items`;
  const parts: Html[] = [];
  if (workItemId !== null) parts.push(html`item <a href="/console/work-items/${workItemId}">${workItemId}</a>`);
  if (deliveryId !== null) parts.push(html`delivery <a href="/console/webhook-deliveries${queryString({ companyId: companyId ?? undefined, cursor: deliveryId + 1 })}">${deliveryId}</a>`);
  if (workType !== null) parts.push(html`work type <a href="/console#bot-heading">${workType}</a>`);
  if (companyId !== null) parts.push(html`company <a href="/console/work-items${queryString({ companyId })}">${companyLabel(companyId, names)}</a>`);
  return html`${parts.map((part, index) => html`${index > 0 ? ", " : ""}${part}`)}`;
}

export function registerAuditPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/audit", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const cursor = queryFields(request.query, AUDIT_QUERY).cursor;
    const beforeAuditId = cursor ? positiveInteger(cursor) : undefined;
    if (cursor && beforeAuditId === undefined) throw new ApiError("VALIDATION_FAILED", "That page link is not valid; start from the first page.");
    const entries = await ctx.store.listAudit({ limit: PAGE_SIZE, ...(beforeAuditId ? { beforeAuditId } : {}) });
    const last = entries.at(-1);
    const names = await companyNames(ctx.store, entries.flatMap((entry) => (entry.target.companyId === null ? [] : [entry.target.companyId])));
    const rows = entries.map(
      (entry) => html`<tr><td data-label="When">${time(entry.at, viewer.timeZone)}</td><td data-label="Operator">${entry.operator.email}</td><td data-label="Action">${entry.action}</td>
<td class="wrap" data-label="Target"><span>${target(entry, names)}</span></td><td class="wrap" data-label="Reason">${entry.reason}</td></tr>`,
    );
    const body = html`${entries.length === 0
      ? html`<p>No operator has acted yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Audit log" tabindex="0"><table class="cards">
<thead><tr><th scope="col">When</th><th scope="col">Operator</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows}</tbody></table></div>`}
${nextPageLink(entries.length === PAGE_SIZE && last ? `/console/audit?cursor=${last.auditId}` : undefined)}`;
    return reply.type("text/html; charset=utf-8").send(page(viewer, "audit", "Audit log", body).markup);
  });
}
