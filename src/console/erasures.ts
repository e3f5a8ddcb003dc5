/**
 * The Overview's line for each company erase under way (SPEC §22): whose, since when, at which
 * phase, who asked and why. Its end is the Audit page's entry `company.erased`.
 */
import type { CompanyErasure } from "../store/store.ts";
import { html, type Html } from "./html.ts";
import { count, time, type Viewer } from "./layout.ts";

const PHASE_TEXT: Record<CompanyErasure["phase"], string> = {
  revoking: "revoking its keys",
  draining: "its keys are revoked; cancelling its New items and waiting for its calls to the authority to end",
  deleting: "deleting its rows",
};

export function erasuresSection(erasures: CompanyErasure[], viewer: Viewer): Html {
  if (erasures.length === 0) return html``;
  const lines = erasures.map(
    (erasure) => html`<li>Erasing company <strong>#${erasure.companyId}</strong> since ${time(erasure.startedAt, viewer.timeZone)}: ${PHASE_TEXT[erasure.phase]}${erasure.items === null
      ? ""
      : html` (${count(erasure.items)} items)`}. Asked by ${erasure.operator.email}: ${erasure.reason}</li>`,
  );
  return html`<section aria-labelledby="erasures-heading"><h2 id="erasures-heading">Erasures under way</h2>
<ul class="plain">${lines}</ul>
<p class="muted">When one ends, the <a href="/console/audit">audit log</a> says so (company.erased).</p></section>`;
}
