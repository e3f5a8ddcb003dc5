/**
 * The Overview's "Throughput (24 h)" chart (SPEC §16, §25): for each of the last 24 hours, the
 * items filed, succeeded and failed, the webhook attempts that failed and the deliveries given
 * up, as five strips of 24 columns over one hour axis. The failed attempts show a receiver in
 * trouble hours before any of its deliveries is given up. Each strip has its own scale, so a handful of failures beside thousands of
 * filings still shows; its name and its total are written above it, so no strip is told apart
 * by colour alone. Drawn like the Deadlines chart (chart.ts), with the table equivalent.
 */
import type { Activity, HourlyActivity } from "../store/store.ts";
import { chartFigure, percent } from "./chart.ts";
import { html, type Html } from "./html.ts";
import { count, formatIn, time } from "./layout.ts";

const STRIP_HEIGHT = 66;
const LABEL_HEIGHT = 18;
const COLUMN_AREA = 40;
const AXIS_HEIGHT = 20;
/** Room between two columns, in hour widths. */
const COLUMN_GAP = 0.18;
/** Hours between two axis labels. */
const AXIS_EVERY = 6;

const STRIPS: ReadonlyArray<{ measure: keyof Activity; label: string; className: string }> = [
  { measure: "submitted", label: "Submitted", className: "tp-submitted" },
  { measure: "succeeded", label: "Succeeded", className: "tp-succeeded" },
  { measure: "failed", label: "Failed", className: "tp-failed" },
  { measure: "deliveryAttemptsFailed", label: "Webhook attempts failed", className: "tp-failed" },
  { measure: "deliveriesFailed", label: "Webhook deliveries given up", className: "tp-failed" },
];

const HOUR_FIELDS: Intl.DateTimeFormatOptions = { hour: "2-digit", minute: "2-digit" };

function strip(hours: HourlyActivity[], { measure, label, className }: (typeof STRIPS)[number], index: number): Html {
  const top = index * STRIP_HEIGHT;
  const base = top + LABEL_HEIGHT + COLUMN_AREA;
  const values = hours.map((hour) => hour[measure]);
  const total = values.reduce((sum, value) => sum + value, 0);
  const peak = Math.max(...values);
  const width = 100 / hours.length;
  const columns = values.map((value, hour) => {
    if (value === 0) return "";
    // At least two pixels, so one item in a busy day is still seen.
    const height = Math.max(2, Math.round((value / peak) * COLUMN_AREA));
    return html`<rect x="${(hour * width + (COLUMN_GAP * width) / 2).toFixed(3)}%" y="${base - height}" width="${(width * (1 - COLUMN_GAP)).toFixed(3)}%" height="${height}" class="${className}"></rect>`;
  });
  return html`<g class="tp-strip">
<text x="0" y="${top + 13}" class="tp-label">${label}: ${count(total)}</text>
<text x="100%" y="${top + 13}" text-anchor="end" class="tp-peak">${peak > 0 ? `most in an hour: ${count(peak)}` : "none"}</text>
<line x1="0" x2="100%" y1="${base + 0.5}" y2="${base + 0.5}" class="tp-baseline"></line>
${columns}
</g>`;
}

function axis(hours: HourlyActivity[], timeZone: string): Html {
  const top = STRIPS.length * STRIP_HEIGHT;
  const labels = hours.map((entry, index) => {
    if (index % AXIS_EVERY !== 0) return "";
    return html`<text x="${percent(index, hours.length)}" y="${top + 12}" class="tp-axis">${formatIn(timeZone, HOUR_FIELDS).format(new Date(entry.hour))}</text>`;
  });
  return html`${labels}<text x="100%" y="${top + 12}" text-anchor="end" class="tp-axis">now</text>`;
}

/** The Throughput section of the Overview: the chart, its legend and its table. */
export function throughputSection(throughput: HourlyActivity[], timeZone: string): Html {
  const heading = html`<h2 id="throughput-heading">Throughput (24&nbsp;h)</h2>`;
  return html`<section aria-labelledby="throughput-heading">${heading}
${chartFigure({
    id: "throughput",
    title: "Throughput (24 h)",
    description: "For each of the last 24 hours, oldest first: items submitted, items succeeded, items failed, webhook delivery attempts that failed (retried or not) and webhook deliveries given up, each strip on its own scale. The table below has the numbers.",
    height: STRIPS.length * STRIP_HEIGHT + AXIS_HEIGHT,
    figureClass: "throughput",
    marks: [...STRIPS.map((entry, index) => strip(throughput, entry, index)), axis(throughput, timeZone)],
    legend: [
      { className: "tp-submitted", label: "submitted", shape: "block" },
      { className: "tp-succeeded", label: "succeeded", shape: "block" },
      { className: "tp-failed", label: "failed (items, webhook attempts and deliveries)", shape: "block" },
    ],
    table: {
      caption: "Throughput in each of the last 24 hours, oldest first",
      columns: [{ label: "Hour from" }, ...STRIPS.map(({ label }) => ({ label, numeric: true }))],
      rows: throughput.map((hour) => [time(hour.hour, timeZone), ...STRIPS.map(({ measure }) => count(hour[measure]))] as [Html, ...string[]]),
    },
  })}
</section>`;
}
