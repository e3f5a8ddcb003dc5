/**
 * The metric names a PromQL expression reads, for the tests that hold the alert rules and the
 * Grafana dashboard to what the service exports. Not a PromQL parser: enough of the grammar to
 * find the names in the expressions we write (selectors, functions, aggregations with by/without,
 * vector matching, ranges, offsets, Grafana's $variables).
 */

const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "inf", "nan"]);

/** The metric names in `expr`, each once, in the order they first appear. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\$\{?\w+\}?/g, " ");
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w:.])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const rest = bare.slice(match.index + match[0].length);
    const isCall = /^\s*\(/.test(rest);
    if (!isCall && !KEYWORDS.has(match[0].toLowerCase())) names.add(match[0]);
  }
  return [...names];
}

/** A Grafana template variable's query: `label_values(metric, label)` reads metric; `label_values(label)` none. */
export function templateQueryMetricNames(query: string): string[] {
  const labelValues = /^\s*label_values\(\s*(.*?)\s*,\s*\w+\s*\)\s*$/.exec(query);
  if (labelValues) return metricNames(labelValues[1]!);
  if (/^\s*label_values\(\s*\w+\s*\)\s*$/.test(query)) return [];
  return metricNames(query.replace(/^\s*query_result\((.*)\)\s*$/, "$1"));
}

/**
 * The names a Prometheus text exposition declares (its `# TYPE` lines: prom-client prints one for
 * every registered metric, even a labelled counter never incremented), with the series names a
 * histogram or summary adds.
 */
export function exposedMetricNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${name}${suffix}`);
    if (type === "summary") for (const suffix of ["_sum", "_count"]) names.add(`${name}${suffix}`);
  }
  return names;
}
