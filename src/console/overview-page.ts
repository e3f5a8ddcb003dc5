/**
 * GET /console: the deadlines, the throughput, the companies and the bot (SPEC §12.3, §14, §16), and its live part alone at
 * /console/overview/live, which console.js fetches every 30 s to swap in without a reload.
 * POST /console/bot/pause and /console/bot/resume.
 */
import type { FastifyInstance } from "fastify";
import type { AppContext } from "../app-context.ts";
import { WORK_TYPES } from "../domain/views.ts";
import { ApiError } from "../errors.ts";
import { buildOverview, recentActivity, type Overview } from "../operators/overview.ts";
import { mayAct } from "../operators/roles.ts";
import { html, queryString, type Html } from "./html.ts";
import { deadlinesSection } from "./deadlines-chart.ts";
import { count, csrfField, page, reasonField, time, type Viewer } from "./layout.ts";
import { formField, operatorAction, viewerOf } from "./security.ts";
import { throughputSection } from "./throughput-chart.ts";
import type { Activity, CompanyErasure } from "../store/store.ts";
import { erasuresSection } from "./erasures.ts";
import { attentionSection } from "./attention.ts";

type RecentActivity = Awaited<ReturnType<typeof recentActivity>>;

/** Company first, then what needs a look (overdue, failed, webhooks retrying), so a phone shows those without scrolling sideways (SPEC §16). */
function companiesTable(overview: Overview, viewer: Viewer): Html {
  if (overview.companies.length === 0) return html`<p>No companies yet.</p>`;
  const rows = overview.companies.map((company) => {
    const items = (status: string, n: number, extra: Record<string, string> = {}) =>
      n > 0 ? html`<a href="/console/work-items${queryString({ companyId: company.companyId, status, ...extra })}">${count(n)}</a>` : html`0`;
    const overdue = company.overdue > 0
      ? html`<a href="/console/work-items${queryString({ companyId: company.companyId, due: "overdue" })}"><strong class="alert-count">${count(company.overdue)}</strong></a>`
      : html`0`;
    const retrying = company.retryingWebhookDeliveries > 0
      ? html`<a href="/console/webhook-deliveries${queryString({ companyId: company.companyId, status: "pending" })}"><strong class="alert-count">${count(company.retryingWebhookDeliveries)}</strong></a>`
      : html`0`;
    return html`<tr>
<th scope="row" class="name">${company.name} <span class="muted">#${company.companyId}</span></th>
<td class="num">${overdue}</td><td class="num">${items("Failed", company.counts.failed)}</td><td class="num">${count(company.failedLast24h)}</td>
<td class="num">${retrying} / ${count(company.pendingWebhookDeliveries)}</td>
<td class="num">${items("New", company.counts.new)}</td><td class="num">${items("InProgress", company.counts.inProgress)}</td>
<td class="num">${items("Submitted", company.counts.submitted)}</td><td class="num">${items("Successful", company.counts.successful)}</td>
<td class="num">${items("Cancelled", company.counts.cancelled)}</td>
<td class="num">${count(company.openBatchItems)}</td><td>${time(company.oldestNewAt, viewer.timeZone, "short")}</td>
</tr>`;
  });
  return html`<div class="table-scroll" role="region" aria-label="Companies table" tabindex="0">
<table>
<thead><tr><th scope="col">Company</th><th scope="col" class="num">Overdue</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Failed (24&nbsp;h)</th><th scope="col" class="num">Webhooks retrying / pending</th>
<th scope="col" class="num">New</th><th scope="col" class="num">In progress</th><th scope="col" class="num">Submitted</th><th scope="col" class="num">Successful</th>
<th scope="col" class="num">Cancelled</th><th scope="col" class="num">In open batch</th><th scope="col">Oldest new</th></tr></thead>
<tbody>${rows}</tbody>
</table>
</div>`;
}

const activityText = (activity: Activity) =>
  `${count(activity.submitted)} submitted, ${count(activity.succeeded)} succeeded, ${count(activity.failed)} failed`;

function botBlock(overview: Overview, recent: RecentActivity, viewer: Viewer): Html {
  const { lastPass, nextPassAt, pausedWorkTypes, breaker, breakerReason } = overview.bot;
  const canAct = mayAct(viewer.operator.role);
  const paused = pausedWorkTypes.map(
    (workType, index) => html`<li>${workType}${canAct
      ? html` <form method="post" action="/console/bot/resume" class="inline">${csrfField(viewer.csrfToken)}<input type="hidden" name="workType" value="${workType}">
${reasonField(`resume-reason-${index}`)} <button type="submit">Resume ${workType}</button></form>`
      : ""}</li>`,
  );
  return html`<dl class="facts">
<dt>Last hour</dt><dd>${activityText(recent.lastHour)}</dd>
<dt>Today</dt><dd>${activityText(recent.today)} <span class="muted">since ${time(recent.dayStartedAt, viewer.timeZone, "short")}</span></dd>
<dt>Last pass</dt><dd>${lastPass
    ? html`${time(lastPass.startedAt, viewer.timeZone)} to ${time(lastPass.finishedAt, viewer.timeZone)}: ${count(lastPass.submitted)} submitted, ${count(lastPass.succeeded)} succeeded, ${count(lastPass.failed)} failed, ${count(lastPass.retried)} retried`
    : "none yet"}</dd>
<dt>Next pass</dt><dd>${time(nextPassAt, viewer.timeZone)}</dd>
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
<select id="pause-work-type" name="workType" required>${WORK_TYPES.map((workType) => html`<option value="${workType}"${pausedWorkTypes.includes(workType) ? html` disabled` : ""}>${workType}${pausedWorkTypes.includes(workType) ? " (paused)" : ""}</option>`)}</select>
${reasonField("pause-reason")}
<button type="submit">Pause</button>
</form>`
    : ""}`;
}

/** The part of the page the refresh replaces: everything that changes on its own. */
function liveOverview(overview: Overview, recent: RecentActivity, erasures: CompanyErasure[], viewer: Viewer, now: Date): Html {
  return html`<div id="overview-live" data-refresh="/console/overview/live" data-refresh-seconds="30">
<p class="muted" aria-live="off">As of ${time(now.toISOString(), viewer.timeZone)}; refreshed every 30 seconds.</p>
${overview.shardGroupsUnreachable > 0
    ? html`<div class="attention" role="status"><p><strong>${count(overview.shardGroupsUnreachable)} ${overview.shardGroupsUnreachable === 1 ? "shard group" : "shard groups"} of the store do not answer.</strong> The companies on ${overview.shardGroupsUnreachable === 1 ? "it" : "them"} are left out of this page, and their adds are refused until the node is back.</p></div>`
    : ""}
${attentionSection(overview)}
${erasuresSection(erasures, viewer)}
<div class="charts">
${deadlinesSection(overview, now, viewer.timeZone)}
${throughputSection(overview.throughput, viewer.timeZone)}
</div>
<section aria-labelledby="companies-heading"><h2 id="companies-heading">Companies</h2>${companiesTable(overview, viewer)}</section>
<section aria-labelledby="bot-heading"><h2 id="bot-heading">Bot</h2>${botBlock(overview, recent, viewer)}</section>
</div>`;
}

async function overviewNow(ctx: AppContext, viewer: Viewer): Promise<Html> {
  const now = new Date();
  const [overview, recent, erasures] = await Promise.all([buildOverview(ctx.store, ctx.config, now), recentActivity(ctx.store, viewer.timeZone, now), ctx.store.companyErasures()]);
  return liveOverview(overview, recent, erasures, viewer, now);
}

export function registerOverviewPage(app: FastifyInstance, ctx: AppContext): void {
  app.get("/", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    return reply.type("text/html; charset=utf-8").send(page(viewer, "overview", "Overview", await overviewNow(ctx, viewer)).markup);
  });

  app.get("/overview/live", async (request, reply) => {
    const viewer = viewerOf(request, reply);
    return reply.type("text/html; charset=utf-8").send((await overviewNow(ctx, viewer)).markup);
  });

  for (const [path, paused] of [["/bot/pause", true], ["/bot/resume", false]] as const) {
    app.post(path, async (request, reply) => {
      const action = operatorAction(request);
      const workType = formField(request, "workType")?.trim() ?? "";
      if (!(WORK_TYPES as readonly string[]).includes(workType)) throw new ApiError("VALIDATION_FAILED", `Choose a work type: ${WORK_TYPES.join(", ")}.`);
      await ctx.store.setWorkTypePaused(workType, paused, action);
      return reply.redirect("/console", 303);
    });
  }
}
