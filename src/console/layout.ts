/** The frame every console page shares: head, skip link, navigation, sign-out, and the small formatters the pages use. */
import type { Operator } from "../store/store.ts";
import { REASON_MAX_LENGTH } from "../operators/roles.ts";
import { html, type Html, type Interpolation } from "./html.ts";

export type NavSection = "overview" | "work-items" | "webhook-deliveries" | "audit" | "none";

/** Who is looking and the CSRF token their forms carry. */
export interface Viewer {
  operator: Operator;
  csrfToken: string;
}

const NAV: ReadonlyArray<{ section: NavSection; href: string; label: string }> = [
  { section: "overview", href: "/console", label: "Overview" },
  { section: "work-items", href: "/console/work-items", label: "Work items" },
  { section: "webhook-deliveries", href: "/console/webhook-deliveries", label: "Webhook deliveries" },
  { section: "audit", href: "/console/audit", label: "Audit" },
];

function documentFrame(title: string, header: Interpolation, main: Interpolation): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Work-Item API console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${header}
<main id="main" tabindex="-1">
${main}
</main>
</body>
</html>
`;
}

/** A signed-in page: navigation, the operator's e-mail and role, and the Sign out form. */
export function page(viewer: Viewer, section: NavSection, title: string, body: Interpolation): Html {
  const links = NAV.map(
    (item) => html`<li><a href="${item.href}"${item.section === section ? html` aria-current="page"` : ""}>${item.label}</a></li>`,
  );
  const header = html`<header class="top">
<p class="brand">Work-Item API console</p>
<nav aria-label="Console"><ul>${links}</ul></nav>
<div class="who">
<span>${viewer.operator.email} (${viewer.operator.role})</span>
<form method="post" action="/console/logout">${csrfField(viewer.csrfToken)}<button type="submit" class="link-button">Sign out</button></form>
</div>
</header>`;
  return documentFrame(title, header, html`<h1>${title}</h1>\n${body}`);
}

/** A page without navigation: sign-in, and errors for someone not signed in. */
export function barePage(title: string, body: Interpolation): Html {
  return documentFrame(title, html`<header class="top"><p class="brand">Work-Item API console</p></header>`, html`<h1>${title}</h1>\n${body}`);
}

export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;

/** The required reason every state-changing form asks for (SPEC §12.2). */
export const reasonField = (id: string): Html =>
  html`<label for="${id}">Reason</label> <input id="${id}" name="reason" type="text" required maxlength="${REASON_MAX_LENGTH}" autocomplete="off">`;

/** ISO instant → "2026-11-23 22:10:07 UTC", inside a <time> element; a dash for none. */
export function time(iso: string | null | undefined): Html {
  if (!iso) return html`<span aria-label="none">—</span>`;
  const shown = iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
  return html`<time datetime="${iso}">${shown}</time>`;
}

/** A status as a badge whose colour carries meaning only together with its text. */
export const statusBadge = (status: string): Html => html`<span class="badge badge-${status.toLowerCase()}">${status}</span>`;

/** "Older →" link of a keyset-paged list; none when this was the last page. */
export function nextPageLink(href: string | undefined, label = "Older entries"): Html {
  return href ? html`<nav class="pager" aria-label="Pages"><a href="${href}">${label} →</a></nav>` : html``;
}
