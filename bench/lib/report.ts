/** Turns a run's results into the console table, a Markdown report and an SVG chart. */
import type { BenchReport, Measurement } from "./model.ts";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const pct = (ratio: number | undefined) => (ratio === undefined ? "" : `${(ratio * 100).toFixed(1)}%`);
const label = (m: Measurement) => (m.phase ? `${m.name} @ ${m.phase}` : m.name);

export function errorsOf(m: Measurement): number {
  return m.load.non2xx + m.load.socketErrors + m.load.timeouts;
}

const COLUMNS = ["route", "req/s", "p50 ms", "p99 ms", "errors", "peak RSS MB", "CPU %", "CPU µs/req", "req/s vs ceiling", "CPU cost vs ceiling"];

function rows(report: BenchReport): string[][] {
  return report.measurements.map((m) => [
    label(m),
    int(m.load.requestsPerSecond),
    ms(m.load.latencyMs.p50),
    ms(m.load.latencyMs.p99),
    int(errorsOf(m)),
    m.peakRssMb.toFixed(0),
    m.cpuPercent.toFixed(0),
    m.cpuMicrosPerRequest.toFixed(0),
    m.target === "ceiling" ? "(ceiling)" : `${pct(m.ratioToCeiling)} of ${m.method}`,
    m.target === "ceiling" ? "(ceiling)" : pct(m.cpuRatioToCeiling),
  ]);
}

function ceilingText(report: BenchReport): string {
  const one = (method: "GET" | "POST") => {
    const c = report.ceiling[method];
    return c.rps === 0 ? `${method} not measured` : `${method} ${int(c.rps)} req/s (pairings ${int(c.min)}–${int(c.max)})`;
  };
  return `${one("GET")}, ${one("POST")}`;
}

/** `--against`: each route's share of the ceiling on both builds, and their ratio (a Markdown table). */
function sideBySideTable(report: BenchReport): string[] {
  const against = report.sideBySide[0]!.against;
  return [
    `| route | this build | ${against} | this / ${against} (req/s) | rounds | this / ${against} (CPU cost) | p99 ms this, ${against} |`,
    "|---|---:|---:|---:|---|---:|---:|",
    ...report.sideBySide.map(
      (s) =>
        `| ${s.route} | ${pct(s.thisToCeiling)} | ${pct(s.againstToCeiling)} | ${s.ratio.toFixed(2)}× | ${s.roundRatios.map((r) => r.toFixed(2)).join(", ")} | ${s.cpuRatio.toFixed(2)}× | ${ms(s.p99Ms.this)}, ${ms(s.p99Ms.against)} |`,
    ),
  ];
}

export function consoleTable(report: BenchReport): string {
  const table = [COLUMNS, ...rows(report)];
  const widths = COLUMNS.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  const out = [line(table[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...table.slice(1).map(line)];
  out.push("", `load generator: ${report.loader}; ${report.settings.connections} connections; ${report.settings.durationSeconds} s per route after ${report.settings.warmupSeconds} s warm-up; ${report.settings.pinning}`);
  out.push(`ceiling (bare node:http, paired slices): ${ceilingText(report)}`);
  for (const check of report.checks) out.push(`${check.ok ? "PASS" : "FAIL"}  ${check.name}: ${check.detail}`);
  for (const target of report.targets) out.push(`${target.met ? "met " : "MISS"}  ${target.name}: ${target.measured} (goal ${target.goal})`);
  if (report.sideBySide.length > 0) out.push("", ...sideBySideTable(report));
  for (const note of report.notes) out.push(`note: ${note}`);
  return out.join("\n");
}

export function markdown(report: BenchReport, svgFile: string): string {
  const table = [COLUMNS, COLUMNS.map((_, i) => (i === 0 ? "---" : "---:")), ...rows(report)].map((row) => `| ${row.join(" | ")} |`);
  const m = report.machine;
  const out = [
    `# Bench run ${report.startedAt}`,
    "",
    `\`${report.command}\``,
    "",
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGb.toFixed(0)} GB, ${m.kernel}, Node ${m.node}; load average ${m.loadAverageStart.map((n) => n.toFixed(2)).join(" ")} at start, ${m.loadAverageEnd.map((n) => n.toFixed(2)).join(" ")} at the end${m.shared ? " (machine shared with other work while measuring)" : ""}.`,
    `- Store: ${report.settings.storeDescription}.`,
    `- Load generator: ${report.loader}, ${report.settings.connections} connections, ${report.settings.durationSeconds} s per route after ${report.settings.warmupSeconds} s warm-up; ${report.settings.pinning}.`,
    `- Ceiling (bare node:http, same run, measured in slices alternating with each route's): ${ceilingText(report)}.`,
    "- `req/s vs ceiling` is the route's requests/s over its paired ceiling's; `CPU cost vs ceiling` is the ceiling's CPU time per request over the route's, which does not depend on whether the load generator or other work on the machine held either of them back.",
    "",
    ...table,
    "",
    `![throughput and p99 per route](${svgFile})`,
    "",
    "## Checks",
    "",
    ...report.checks.map((c) => `- ${c.ok ? "PASS" : "FAIL"} ${c.name}: ${c.detail}`),
    "",
    "## Targets",
    "",
    "| target | goal | measured | met |",
    "|---|---|---|---|",
    ...report.targets.map((t) => `| ${t.name} | ${t.goal} | ${t.measured} | ${t.met ? "yes" : "**no**"} |`),
  ];
  if (report.sideBySide.length > 0) out.push("", "## Side by side", "", ...sideBySideTable(report));
  if (report.profiles.length > 0) {
    out.push("", "## CPU profiles (self time)", "");
    for (const profile of report.profiles) {
      out.push(`### ${profile.route}`, "", `\`${profile.file}\`, ${int(profile.totalMs)} ms sampled`, "", "| phase | ms | % |", "|---|---:|---:|");
      for (const p of profile.byPhase) out.push(`| ${p.phase} | ${int(p.ms)} | ${p.percent.toFixed(1)} |`);
      out.push("", "| function | where | self ms | % |", "|---|---|---:|---:|");
      for (const f of profile.topFunctions) out.push(`| ${f.name} | ${f.where} | ${int(f.selfMs)} | ${f.percent.toFixed(1)} |`);
      out.push("", "| area | self ms | % |", "|---|---:|---:|");
      for (const a of profile.byArea) out.push(`| ${a.area} | ${int(a.selfMs)} | ${a.percent.toFixed(1)} |`);
      out.push("");
    }
  }
  if (report.notes.length > 0) out.push("", "## Notes", "", ...report.notes.map((n) => `- ${n}`));
  return `${out.join("\n")}\n`;
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Two horizontal bar panels: requests/s (with the ceiling of each method marked) and p99. */
export function svgChart(report: BenchReport): string {
  const ms_ = report.measurements;
  const rowH = 26;
  const left = 270;
  const barW = 520;
  const width = left + barW + 170;
  const panelH = ms_.length * rowH + 40;
  const height = 50 + panelH * 2 + 30;
  const maxRps = Math.max(1, ...ms_.map((m) => m.load.requestsPerSecond));
  const maxP99 = Math.max(2, ...ms_.map((m) => m.load.latencyMs.p99));
  // p99 spans orders of magnitude (a bare server's 2 ms, a 50-item page's 200 ms): log scale from 0.5 ms.
  const logScale = (ms: number) => Math.log10(Math.max(ms, 0.5) / 0.5) / Math.log10(maxP99 / 0.5);
  const chartLabel = (m: Measurement) => (m.target === "ceiling" ? `└ ceiling ${m.method} (paired)` : label(m));
  const colour = (m: Measurement) => ({ ceiling: "#9aa5b1", baseline: "#d08c60", floor: "#6a9f58", server: "#2f6fb0" })[m.target];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="bold">${escapeXml(`Work-Item API bench ${report.startedAt} (${report.settings.store}, ${report.settings.connections} connections, ${report.loader})`)}</text>`,
  ];
  const panel = (top: number, title: string, value: (m: Measurement) => number, max: number, text: (m: Measurement) => string, marks: Array<{ at: number; label: string }>, scale = (v: number) => v / max) => {
    parts.push(`<text x="12" y="${top + 16}" font-weight="bold">${escapeXml(title)}</text>`);
    ms_.forEach((m, i) => {
      const y = top + 28 + i * rowH;
      const w = Math.max(1, scale(value(m)) * barW);
      parts.push(`<text x="${left - 8}" y="${y + 15}" text-anchor="end"${m.target === "ceiling" ? ' fill="#555"' : ""}>${escapeXml(chartLabel(m))}</text>`);
      parts.push(`<rect x="${left}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 8}" fill="${colour(m)}"/>`);
      parts.push(`<text x="${left + w + 6}" y="${y + 15}">${escapeXml(text(m))}</text>`);
    });
    for (const mark of marks) {
      const x = left + scale(mark.at) * barW;
      parts.push(`<line x1="${x.toFixed(1)}" y1="${top + 24}" x2="${x.toFixed(1)}" y2="${top + 28 + ms_.length * rowH}" stroke="#c0392b" stroke-dasharray="4 3"/>`);
      parts.push(`<text x="${x.toFixed(1)}" y="${top + 22}" text-anchor="middle" fill="#c0392b" font-size="11">${escapeXml(mark.label)}</text>`);
    }
  };
  panel(
    40,
    "requests/s (grey: the ceiling in slices paired with the route above it; dashed: ceiling over all pairings)",
    (m) => m.load.requestsPerSecond,
    maxRps,
    (m) => `${int(m.load.requestsPerSecond)}${m.target === "ceiling" ? "" : ` (${pct(m.ratioToCeiling)})`}`,
    (["GET", "POST"] as const).filter((method) => report.ceiling[method].rps > 0).map((method) => ({ at: report.ceiling[method].rps, label: method })),
  );
  panel(
    40 + panelH,
    "p99 latency, ms (log scale)",
    (m) => m.load.latencyMs.p99,
    maxP99,
    (m) => `${ms(m.load.latencyMs.p99)} ms`,
    [1, 10, 100, 1000].filter((at) => at <= maxP99).map((at) => ({ at, label: `${at} ms` })),
    logScale,
  );
  parts.push(`<text x="12" y="${height - 10}" font-size="11" fill="#555">blue: this service; grey: bare node:http ceiling; orange: plain pg pool baseline; green: bare Fastify floor</text>`);
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
