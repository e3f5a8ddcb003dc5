/**
 * What the Overview's charts share (SPEC §14, §16): each is inline SVG drawn here, on the server
 * (no script), sized in percent of its width so it fits a phone as well as a desktop, styled
 * through classes from console.css (the CSP allows no inline style), with a legend for the eye
 * and a table with the same numbers for screen readers.
 */
import { html, type Html, type Interpolation } from "./html.ts";

/** `value` as a percentage of `scale`, capped at 100%: an x or a width inside the chart. */
export const percent = (value: number, scale: number): string => `${((Math.min(value, scale) / scale) * 100).toFixed(2)}%`;

export interface ChartFigure {
  /** Prefix of the element ids: `<id>-svg-title`, `<id>-table`, … */
  id: string;
  title: string;
  /** What the picture shows, for those who do not see it; ends by pointing to the table. */
  description: string;
  /** Pixels; the width is the figure's. */
  height: number;
  /** The class of the figure, which sets its width, and of the svg (`<figureClass>-chart`). */
  figureClass: string;
  /** Patterns and gradients the marks use. */
  defs?: Interpolation;
  marks: Interpolation;
  legend: LegendKey[];
  table: ChartTable;
}

/** A key of the legend: a small swatch drawn with `className`, and what it stands for. */
export interface LegendKey {
  className: string;
  label: string;
  /** `bar`: a thin bar, as the marks are drawn; `block`: the whole swatch. */
  shape: "bar" | "block";
}

export interface ChartTable {
  caption: string;
  /** The first column heads the rows (`<th scope="row">`); `numeric` columns are right-aligned. */
  columns: Array<{ label: string; numeric?: boolean }>;
  rows: Array<[Interpolation, ...Interpolation[]]>;
}

function legendKey({ className, label, shape }: LegendKey): Html {
  const swatch = shape === "bar" ? html`<rect y="2" width="18" height="8" class="${className}"></rect>` : html`<rect width="18" height="12" class="${className}"></rect>`;
  return html`<span><svg width="18" height="12" class="chart-key">${swatch}</svg> ${label}</span>`;
}

function hiddenTable(id: string, { caption, columns, rows }: ChartTable): Html {
  const numeric = (index: number) => (columns[index]?.numeric ? html` class="num"` : "");
  const head = columns.map((column, index) => html`<th scope="col"${numeric(index)}>${column.label}</th>`);
  const body = rows.map(
    ([first, ...rest]) => html`<tr>
<th scope="row">${first}</th>${rest.map((cell, index) => html`<td${numeric(index + 1)}>${cell}</td>`)}
</tr>`,
  );
  // The wrapper hides it: a table grows to its content whatever width it is given.
  return html`<div class="visually-hidden"><table id="${id}-table">
<caption>${caption}</caption>
<thead><tr>${head}</tr></thead>
<tbody>${body}</tbody>
</table></div>`;
}

/** The figure: the SVG with its title and description, the legend (hidden from screen readers, who have the table) and the table. */
export function chartFigure(chart: ChartFigure): Html {
  const { id } = chart;
  return html`<figure class="${chart.figureClass}">
<svg role="img" aria-labelledby="${id}-svg-title" aria-describedby="${id}-svg-desc" width="100%" height="${chart.height}" class="${chart.figureClass}-chart">
<title id="${id}-svg-title">${chart.title}</title>
<desc id="${id}-svg-desc">${chart.description}</desc>
${chart.defs ? html`<defs>${chart.defs}</defs>` : ""}
${chart.marks}
</svg>
<figcaption class="chart-legend" aria-hidden="true">
${chart.legend.map(legendKey)}
</figcaption>
${hiddenTable(id, chart.table)}
</figure>`;
}
