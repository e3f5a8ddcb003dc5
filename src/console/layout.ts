/** The frame every console page shares: head, skip link, navigation, sign-out, and the small formatters the pages use. */
import type { DueCalendar } from "../domain/due.ts";
import type { Operator } from "../store/store.ts";
import { REASON_MAX_LENGTH } from "../operators/roles.ts";
import { html, type Html, type Interpolation } from "./html.ts";

export type NavSection = "overview" | "work-items" | "webhook-deliveries" | "audit" | "none";

/** Who is looking, the CSRF token their forms carry, the time zone they read times in (CONSOLE_TZ), and where "today" is reckoned. */
export interface Viewer {
  operator: Operator;
  csrfToken: string;
  timeZone: string;
  calendar: DueCalendar;
}

const NAV: ReadonlyArray<{ section: NavSection; href: string; label: string }> = [
  { section: "overview", href: "/console", label: "Overview" },
  { section: "work-items", href: "/console/work-items", label: "Work items" },
  { section: "webhook-deliveries", href: "/console/webhook-deliveries", label: "Webhook deliveries" },
  { section: "audit", href: "/console/audit", label: "Audit" },
];

function documentFrame(title: string, header: Interpolation, main: Interpolation, head: Interpolation = ""): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Work-Item API console</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
${head}
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
<form method="get" action="/console/find" class="find" role="search" aria-label="Look up a work item">
<label for="find-text">Find</label> <input id="find-text" name="q" type="search" required maxlength="200" placeholder="id, application or registration no." autocomplete="off"> <button type="submit" class="link-button">Go</button>
</form>
<div class="who">
<span>${viewer.operator.email} (${viewer.operator.role}) · times in ${viewer.timeZone}</span>
<form method="post" action="/console/logout">${csrfField(viewer.csrfToken)}<button type="submit" class="link-button">Sign out</button></form>
</div>
</header>`;
  return documentFrame(title, header, html`<h1>${title}</h1>\n${body}`);
}

/** A page without navigation: sign-in, and errors for someone not signed in. */
const BARE_HEADER = html`<header class="top"><p class="brand">Work-Item API console</p></header>`;

export function barePage(title: string, body: Interpolation): Html {
  return documentFrame(title, BARE_HEADER, html`<h1>${title}</h1>\n${body}`);
}

/**
 * A page without navigation that moves the browser on to `url` at once, by itself and without
 * script (a meta refresh), for a person to read only if that fails. The next request then
 * starts from this page, so it is same-site and carries the SameSite=Strict session cookie.
 */
export function movingOnPage(title: string, body: Interpolation, url: string): Html {
  return documentFrame(title, BARE_HEADER, html`<h1>${title}</h1>\n${body}`, html`<meta http-equiv="refresh" content="0; url=${url}">`);
}

export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;

/** The required reason every state-changing form asks for (SPEC §12.2). */
export const reasonField = (id: string): Html =>
  html`<label for="${id}">Reason</label> <input id="${id}" name="reason" type="text" required maxlength="${REASON_MAX_LENGTH}" autocomplete="off">`;

const formats = new Map<string, Intl.DateTimeFormat>();
/**
 * A 24-hour British-English formatter of these fields in `timeZone`, made once: building one costs
 * far more than using it, and a page shows hundreds of times.
 */
export function formatIn(timeZone: string, fields: Omit<Intl.DateTimeFormatOptions, "timeZone" | "hourCycle">): Intl.DateTimeFormat {
  const key = `${timeZone}/${JSON.stringify(fields)}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", { ...fields, timeZone, hourCycle: "h23" });
    formats.set(key, format);
  }
  return format;
}

const TIME_FIELDS: Record<TimeStyle, Intl.DateTimeFormatOptions> = {
  full: { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" },
  short: { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" },
};

/** `full`: "25 Nov 2026, 18:10:07 CET"; `short`, for the columns that must fit on a phone: "25 Nov, 18:10". */
export type TimeStyle = "full" | "short";

/** An instant shown in the viewer's time zone, in a <time> element whose title is the UTC instant (SPEC §16); a dash for none. */
export function time(iso: string | null | undefined, timeZone: string, style: TimeStyle = "full"): Html {
  if (!iso) return html`<span aria-label="none">—</span>`;
  const utc = `${iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "")} UTC`;
  return html`<time datetime="${iso}" title="${utc}">${formatIn(timeZone, TIME_FIELDS[style]).format(new Date(iso))}</time>`;
}

/** Whole numbers as people read them: 1,234. */
export const count = (n: number): string => n.toLocaleString("en");

/** A status as a badge whose colour carries meaning only together with its text. */
export const statusBadge = (status: string): Html => html`<span class="badge badge-${status.toLowerCase()}">${status}</span>`;

/** What an action just did, said once on the page its redirect leads to; role=status, so a screen reader says it too. */
export const confirmationNotice = (message: string | undefined): Html => (message ? html`<p class="notice notice-ok" role="status">${message}</p>` : html``);

/** "Older →" link of a keyset-paged list; none when this was the last page. */
export function nextPageLink(href: string | undefined, label = "Older entries"): Html {
  return href ? html`<nav class="pager" aria-label="Pages"><a href="${href}">${label} →</a></nav>` : html``;
}
