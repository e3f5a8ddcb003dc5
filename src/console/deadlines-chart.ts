/**
 * The Overview's "Deadlines" chart (SPEC §14): a bar per coming deadline and one for the overdue
 * items, each set against what the bot can still file before its deadline at the last hour's
 * rate. Drawn here as inline SVG (no script; colours and patterns come from console.css through
 * classes, as the CSP allows no inline style), with the same numbers in a table for screen
 * readers. What misses is told apart by a striped pattern and by its text, never by colour alone.
 */
import { deadlineOutlook, type DeadlineOutlook } from "../operators/deadline-outlook.ts";
import type { Overview } from "../operators/overview.ts";
import { chartFigure, percent } from "./chart.ts";
import { html, type Html } from "./html.ts";
import { count, formatIn, time } from "./layout.ts";

const ROW_HEIGHT = 78;
const TRACK_TOP = 21;
const TRACK_HEIGHT = 22;
const BAR_INSET = 5;
const NUB_PX = 4;
/** The Overdue bar is at least 1/OVERDUE_MIN_SHARE of the chart's width. */
const OVERDUE_MIN_SHARE = 10;
/** Where "N late" leads: the waiting items, the most urgent first. */
const OVERDUE_LIST = "/console/work-items?due=overdue&sort=deadline";
const WAITING_BY_DEADLINE = "/console/work-items?status=New&sort=deadline";

const LABEL_FIELDS: Intl.DateTimeFormatOptions = { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZoneName: "short" };

function timeToGo(deadlineAt: string, now: Date): string {
  const minutes = Math.max(0, Math.round((Date.parse(deadlineAt) - now.getTime()) / 60_000));
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ""}`;
  return `in ${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * A bar's text, short enough for a 390 px screen: above it the deadline and how far off it is;
 * below it the items waiting and what the bot can file in time, and what is late (or "all in time").
 */
function texts(row: DeadlineOutlook, rateKnown: boolean, now: Date, timeZone: string): { when: string; toGo: string; load: string; outcome: string } {
  const waiting = `${count(row.unsubmitted)} waiting`;
  if (row.deadlineAt === null) return { when: "Overdue", toGo: "deadline passed", load: waiting, outcome: row.beyond > 0 ? `${count(row.beyond)} late` : "none" };
  const when = formatIn(timeZone, LABEL_FIELDS).format(new Date(row.deadlineAt)).replace(/,/g, "");
  if (!rateKnown) return { when, toGo: timeToGo(row.deadlineAt, now), load: waiting, outcome: "" };
  return { when, toGo: timeToGo(row.deadlineAt, now), load: `${waiting} · can file ${count(row.canFile)}`, outcome: row.beyond > 0 ? `${count(row.beyond)} late` : "all in time" };
}

/** A bar's part from `from` for `value` items; under a nub of NUB_PX (fill only), so that a few items out of thousands still show. */
function barPart(from: number, value: number, scale: number, y: number, height: number, kind: string): Html {
  if (value <= 0) return html``;
  const x = percent(from, scale);
  return html`<rect x="${x}" y="${y}" width="${NUB_PX}" height="${height}" class="${kind}-fill"></rect><rect x="${x}" y="${y}" width="${percent(value, scale)}" height="${height}" class="${kind}"></rect>`;
}

function barRow(row: DeadlineOutlook, index: number, scale: number, rateKnown: boolean, now: Date, timeZone: string): Html {
  const top = index * ROW_HEIGHT;
  const track = top + TRACK_TOP;
  const bar = track + BAR_INSET;
  const barHeight = TRACK_HEIGHT - 2 * BAR_INSET;
  const { when, toGo, load, outcome } = texts(row, rateKnown, now, timeZone);
  const late = row.deadlineAt === null ? row.unsubmitted : rateKnown ? row.beyond : 0;
  const onTime = row.unsubmitted - late;
  const roomShown = row.deadlineAt !== null && rateKnown;
  return html`<g class="dl-row">
<text x="0" y="${top + 14}" class="dl-label">${when}</text>
<text x="100%" y="${top + 14}" text-anchor="end" class="dl-to-go">${toGo}</text>
${roomShown ? html`<rect x="0" y="${track}" width="${percent(row.canFile, scale)}" height="${TRACK_HEIGHT}" class="dl-room"></rect>` : ""}
${barPart(0, onTime, scale, bar, barHeight, rateKnown ? "dl-in-time" : "dl-waiting")}
${barPart(onTime, late, scale, bar - 2, barHeight + 4, "dl-late")}
${roomShown && row.canFile <= scale ? html`<line x1="${percent(row.canFile, scale)}" x2="${percent(row.canFile, scale)}" y1="${track - 3}" y2="${track + TRACK_HEIGHT + 3}" class="dl-marker"></line>` : ""}
<text x="0" y="${top + 58}" class="dl-load">${load}</text>
<text x="100%" y="${top + 58}" text-anchor="end" class="${late > 0 ? "dl-late-text" : "dl-ok-text"}">${outcome}</text>
</g>`;
}

/** The Deadlines section of the Overview: the chart, its legend and its table. */
export function deadlinesSection(overview: Overview, now: Date, timeZone: string): Html {
  const { deadlines, bot } = overview;
  const heading = html`<h2 id="deadlines-heading">Deadlines</h2>`;
  if (deadlines.overdue === 0 && deadlines.next.length === 0) {
    return html`<section aria-labelledby="deadlines-heading">${heading}<p>No item is waiting to be filed.</p></section>`;
  }
  const rateKnown = bot.submittedLastHour > 0;
  const rows = deadlineOutlook(deadlines, bot.submittedLastHour, now);
  const largest = Math.max(1, ...rows.map((row) => row.unsubmitted));
  const room = rateKnown ? Math.max(...rows.map((row) => row.canFile)) : 0;
  // One scale for the bars and the room, so a bar's length and its "can file" label agree; a
  // small queue against a large room stays visible through its nub.
  const scale = Math.max(largest, room);
  const late = rows.reduce((sum, row) => sum + (row.deadlineAt === null ? 0 : row.beyond), 0);
  const missed = deadlines.overdue > 0
    ? html`<strong><a href="${OVERDUE_LIST}">${count(deadlines.overdue)} ${deadlines.overdue === 1 ? "item has missed its" : "items have missed their"} deadline</a>.</strong> `
    : "";
  const others = deadlines.overdue > 0 ? "every other waiting item" : "every waiting item";
  const rate = rateKnown
    ? html`${missed}The bot filed ${count(bot.submittedLastHour)} items in the last hour; at that rate, ${late > 0 ? html`<strong><a href="${WAITING_BY_DEADLINE}">${count(late)} ${deadlines.overdue > 0 ? "more " : ""}will be late</a></strong>` : `${others} is filed in time`}.`
    : html`${missed}The bot filed nothing in the last hour, so there is no rate to set the deadlines against.`;
  return html`<section aria-labelledby="deadlines-heading">${heading}
<p>${rate}</p>
${chartFigure({
    id: "deadlines",
    title: "Deadlines",
    description: "A bar per deadline: the items waiting to be filed, against what the bot can file before the deadline at the last hour's rate. The Overdue bar, which has nothing to be set against, is drawn against the most items waiting for one deadline, and at least a tenth of the width. The table below has the numbers.",
    height: rows.length * ROW_HEIGHT,
    figureClass: "deadlines",
    defs: html`<pattern id="deadlines-late-stripes" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" class="dl-stripe-ground"></rect><rect width="3" height="6" class="dl-stripe"></rect></pattern>`,
    // The Overdue bar has no room to set it against: on the room's scale a few overdue items
    // beside a day's capacity were a sliver, so it is drawn against the longest queue instead,
    // and never shorter than a tenth of the chart.
    marks: rows.map((row, index) => barRow(row, index, row.deadlineAt === null ? Math.min(largest, row.unsubmitted * OVERDUE_MIN_SHARE) : scale, rateKnown, now, timeZone)),
    legend: [
      ...(rateKnown ? [{ className: "dl-room", label: "what the bot can file in time", shape: "block" } as const] : []),
      { className: rateKnown ? "dl-in-time" : "dl-waiting", label: rateKnown ? "waiting, filed in time" : "waiting", shape: "bar" },
      { className: "dl-late", label: "late, or late at this rate", shape: "block" },
    ],
    table: {
      caption: "Deadlines: items waiting to be filed, against what the bot can file before each deadline at the last hour's rate",
      columns: [{ label: "Deadline" }, { label: "Waiting", numeric: true }, { label: "Companies", numeric: true }, { label: "Can file in time", numeric: true }, { label: "Late at this rate", numeric: true }],
      rows: rows.map((row) => [
        row.deadlineAt === null ? "Overdue" : time(row.deadlineAt, timeZone),
        count(row.unsubmitted),
        row.companies === null ? "—" : count(row.companies),
        row.deadlineAt === null ? "0" : rateKnown ? count(row.canFile) : "unknown",
        row.deadlineAt === null ? count(row.beyond) : rateKnown ? count(row.beyond) : "unknown",
      ]),
    },
  })}
</section>`;
}
