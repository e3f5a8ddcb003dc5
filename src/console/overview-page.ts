/**
 * GET /console: the deadlines, the companies and the bot (SPEC §12.3, §14), and its live part alone at
 * /console/overview/live, which console.js fetches every 30 s to swap in without a reload.
 * POST /console/bot/pause and /console/bot/resume.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { WORK_TYPE_AUTHORITY_RVDM } from "../domain/views.ts";
import { ApiError } from "../errors.ts";
import { buildOverview, type Overview } from "../operators/overview.ts";
import { mayAct } from "../operators/roles.ts";
import { html, queryString, type Html } from "./html.ts";
import { deadlinesSection } from "./deadlines-chart.ts";
import { csrfField, page, reasonField, time, type Viewer } from "./layout.ts";
import { formField, operatorAction, viewerOf } from "./security.ts";

const WORK_TYPE = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

function companiesTable(overview: Overview): Html {
  if (overview.companies.length === 0) return html`<p>No companies yet.</p>`;
  const rows = overview.companies.map((company) => {
    const items = (status: string, count: number) =>
      count > 0 ? html`<a href="/console/work-items${queryString({ companyId: company.companyId, status })}">${count}</a>` : html`0`;
    return html`<tr>
<th scope="row">${company.name} <span class="muted">#${company.companyId}</span></th>
<td class="num">${items("New", company.counts.new)}</td><td class="num">${items("InProgress", company.counts.inProgress)}</td>
<td class="num">${items("Submitted", company.counts.submitted)}</td><td class="num">${items("Successful", company.counts.successful)}</td>
<td class="num">${items("Failed", company.counts.failed)}</td><td class="num">${items("Cancelled", company.counts.cancelled)}</td>
<td class="num">${company.openBatchItems}</td><td>${time(company.oldestNewAt)}</td>
<td class="num">${company.failedLast24h}</td><td class="num">${company.pendingWebhookDeliveries}</td>
</tr>`;
  });
  return html`<div class="table-scroll" role="region" aria-label="Companies table" tabindex="0">
<table>
<thead><tr><th scope="col">Company</th><th scope="col" class="num">New</th><th scope="col" class="num">In progress</th><th scope="col" class="num">Submitted</th><th scope="col" class="num">Successful</th>
<th scope="col" class="num">Failed</th><th scope="col" class="num">Cancelled</th><th scope="col" class="num">In open batch</th><th scope="col">Oldest new</th><th scope="col" class="num">Failed (24 h)</th><th scope="col" class="num">Webhooks pending</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</div>`;
}

function botBlock(overview: Overview, viewer: Viewer): Html {
  const { submittedLastHour, lastPass, nextPassAt, pausedWorkTypes, breaker, breakerReason } = overview.bot;
  const canAct = mayAct(viewer.operator.role);
  const paused = pausedWorkTypes.map(
    (workType, index) => html`<li>${workType}${canAct
      ? html` <form method="post" action="/console/bot/resume" class="inline">${csrfField(viewer.csrfToken)}<input type="hidden" name="workType" value="${workType}">
${reasonField(`resume-reason-${index}`)} <button type="submit">Resume ${workType}</button></form>`
      : ""}</li>`,
  );
  return html`<dl class="facts">
<dt>Filed in the last hour</dt><dd>${submittedLastHour.toLocaleString("en")}</dd>
<dt>Last pass</dt><dd>${lastPass
    ? html`${time(lastPass.startedAt)} to ${time(lastPass.finishedAt)}: ${lastPass.submitted} submitted, ${lastPass.succeeded} succeeded, ${lastPass.failed} failed, ${lastPass.retried} retried`
    : "none yet"}</dd>
<dt>Next pass</dt><dd>${time(nextPassAt)}</dd>
<dt>Authority circuit breaker</dt><dd>${breaker === "halfOpen" ? "half open (probing)" : breaker}${breakerReason
    ? html`<p class="problem">Filing is stopped: ${breakerReason}. No attempt is spent meanwhile; put it right and filing resumes at the next probe.</p>`
    : ""}</dd>
<dt>Paused work types</dt><dd>${pausedWorkTypes.length === 0 ? "none" : html`<ul class="plain">${paused}</ul>`}</dd>
</dl>
${canAct
    ? html`<form method="post" action="/console/bot/pause" class="stacked narrow">
<h3>Pause filing</h3>
${csrfField(viewer.csrfToken)}
<label for="pause-work-type">Work type</label>
<input id="pause-work-type" name="workType" type="text" required value="${WORK_TYPE_AUTHORITY_RVDM}" pattern="[A-Za-z][A-Za-z0-9]*">
${reasonField("pause-reason")}
<button type="submit">Pause</button>
</form>`
    : ""}`;
}

/** The part of the page the refresh replaces: everything that changes on its own. */
function liveOverview(overview: Overview, viewer: Viewer, now: Date): Html {
  return html`<div id="overview-live" data-refresh="/console/overview/live" data-refresh-seconds="30">
<p class="muted" aria-live="off">As of ${time(now.toISOString())}; refreshed every 30 seconds.</p>
${deadlinesSection(overview, now)}
<section aria-labelledby="companies-heading"><h2 id="companies-heading">Companies</h2>${companiesTable(overview)}</section>
<section aria-labelledby="bot-heading"><h2 id="bot-heading">Bot</h2>${botBlock(overview, viewer)}</section>
</div>`;
}

export function registerOverviewPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const now = new Date();
    const overview = await buildOverview(ctx.store, ctx.config, now);
    return reply.type("text/html; charset=utf-8").send(page(viewer, "overview", "Overview", liveOverview(overview, viewer, now)).markup);
  });

  app.get("/overview/live", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    const now = new Date();
    const overview = await buildOverview(ctx.store, ctx.config, now);
    return reply.type("text/html; charset=utf-8").send(liveOverview(overview, viewer, now).markup);
  });

  for (const [path, paused] of [["/bot/pause", true], ["/bot/resume", false]] as const) {
    app.post(path, async (request, reply) => {
      const action = operatorAction(request);
      const workType = formField(request, "workType")?.trim() ?? "";
      if (!WORK_TYPE.test(workType)) throw new ApiError("VALIDATION_FAILED", "Name a work type, e.g. AuthorityRvdm.");
      await ctx.store.setWorkTypePaused(workType, paused, action);
      return reply.redirect("/console", 303);
    });
  }
}
