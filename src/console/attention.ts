/**
 * The Overview's first lines (SPEC §25): what needs an operator now, above the charts so that it
 * is in view at 1280×800 and on a phone: the items past their deadline and the webhook
 * deliveries retrying, each in all and per company, and the deliveries given up in the last 24
 * hours. The counts are red and written out; the colour only adds to the words.
 */
import type { Overview } from "../operators/overview.ts";
import type { CompanyOverview } from "../store/store.ts";
import { html, queryString, type Html } from "./html.ts";
import { count } from "./layout.ts";

/** Companies named per line, the most affected first; the rest are "and N more". */
const NAMED_PER_LINE = 6;

function perCompany(companies: CompanyOverview[], measure: (company: CompanyOverview) => number, link: (company: CompanyOverview) => string): Html {
  const affected = companies.filter((company) => measure(company) > 0).sort((a, b) => measure(b) - measure(a) || a.companyId - b.companyId);
  const named = affected.slice(0, NAMED_PER_LINE).map(
    (company, index) => html`${index > 0 ? ", " : ""}<a href="${link(company)}">${company.name}</a>&nbsp;<strong class="alert-count">${count(measure(company))}</strong>`,
  );
  const more = affected.length - NAMED_PER_LINE;
  return html`${named}${more > 0 ? ` and ${count(more)} more` : ""}`;
}

export function attentionSection(overview: Overview): Html {
  const { companies, deadlines, throughput } = overview;
  const retrying = companies.reduce((sum, company) => sum + company.retryingWebhookDeliveries, 0);
  const givenUp = throughput.reduce((sum, hour) => sum + hour.deliveriesFailed, 0);
  const lines: Html[] = [];
  if (deadlines.overdue > 0) {
    lines.push(html`<li><a href="/console/work-items${queryString({ due: "overdue", sort: "deadline" })}"><strong class="alert-count">${count(deadlines.overdue)}</strong> ${deadlines.overdue === 1 ? "item is" : "items are"} overdue</a>:
${perCompany(companies, (company) => company.overdue, (company) => `/console/work-items${queryString({ companyId: company.companyId, due: "overdue", sort: "deadline" })}`)}</li>`);
  }
  if (retrying > 0) {
    lines.push(html`<li><a href="/console/webhook-deliveries${queryString({ status: "pending" })}"><strong class="alert-count">${count(retrying)}</strong> webhook ${retrying === 1 ? "delivery is" : "deliveries are"} retrying</a>:
${perCompany(companies, (company) => company.retryingWebhookDeliveries, (company) => `/console/webhook-deliveries${queryString({ companyId: company.companyId, status: "pending" })}`)}</li>`);
  }
  if (givenUp > 0) {
    lines.push(html`<li><a href="/console/webhook-deliveries${queryString({ status: "failed" })}"><strong class="alert-count">${count(givenUp)}</strong> webhook ${givenUp === 1 ? "delivery was" : "deliveries were"} given up</a> in the last 24&nbsp;hours.</li>`);
  }
  const heading = html`<h2 id="attention-heading">Needs a look</h2>`;
  if (lines.length === 0) {
    return html`<section aria-labelledby="attention-heading" class="attention attention-none">${heading}<p>Nothing is overdue, and no webhook delivery is retrying.</p></section>`;
  }
  return html`<section aria-labelledby="attention-heading" class="attention">${heading}<ul>${lines}</ul></section>`;
}
