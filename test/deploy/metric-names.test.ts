/**
 * Every metric the alert rules and the Grafana dashboard name is one the service exports (SPEC
 * §17): a real server process (role `all`, so the worker's metrics are there too) is scraped, and
 * the names in the PromQL of both files are looked up in its `# TYPE` lines. A misspelt or renamed
 * metric would otherwise leave an alert that never fires and a panel that stays empty.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { sqliteBackend } from "../helpers/backends.ts";
import { REPO_ROOT, startServer, type ServerProcess } from "../helpers/processes.ts";
import { exposedMetricNames, metricNames, templateQueryMetricNames } from "../helpers/promql.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** Series Prometheus makes itself for each scrape, not the service. */
const PROMETHEUS_OWN = new Set(["up", "scrape_duration_seconds", "scrape_samples_scraped"]);

interface GrafanaDataSource {
  type: string;
  uid: string;
}
interface GrafanaPanel {
  title: string;
  datasource?: GrafanaDataSource;
  targets?: Array<{ expr?: string; datasource?: GrafanaDataSource }>;
  panels?: GrafanaPanel[];
}
interface GrafanaDashboard {
  panels: GrafanaPanel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
}

const readDashboard = () => JSON.parse(readFileSync(join(REPO_ROOT, "deploy", "grafana", "work-item-api.json"), "utf8")) as GrafanaDashboard;
const allPanels = (list: GrafanaPanel[]): GrafanaPanel[] => list.flatMap((panel) => [panel, ...allPanels(panel.panels ?? [])]);

/** Where each name is used: "rules: AlertName", "dashboard: Panel title". */
function namesInUse(): Map<string, string[]> {
  const uses = new Map<string, string[]>();
  const add = (names: string[], where: string) => {
    for (const name of names) uses.set(name, [...(uses.get(name) ?? []), where]);
  };
  const rules = parse(readFileSync(join(REPO_ROOT, "deploy", "prometheus", "work-item-api.rules.yml"), "utf8")) as {
    groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
  };
  for (const rule of rules.groups.flatMap((group) => group.rules)) add(metricNames(rule.expr), `rules: ${rule.alert ?? rule.record}`);
  const dashboard = readDashboard();
  for (const panel of allPanels(dashboard.panels)) {
    for (const target of panel.targets ?? []) if (target.expr) add(metricNames(target.expr), `dashboard: ${panel.title}`);
  }
  for (const variable of dashboard.templating.list.filter((v) => v.type === "query")) {
    const query = typeof variable.query === "string" ? variable.query : (variable.query?.query ?? "");
    add(templateQueryMetricNames(query), `dashboard: variable ${variable.name}`);
  }
  return uses;
}

test("metric names are found in PromQL, and nothing else is", () => {
  assert.deepEqual(
    metricNames('sum by (job) (rate(a_total{outcome=~"retried|failed", job="$job"}[15m])) / on (job) group_left sum(rate(b_total[$__rate_interval] offset 5m))'),
    ["a_total", "b_total"],
  );
  assert.deepEqual(metricNames("time() - (x > y or y) > 3 * clamp_min(z > 0, 60)"), ["x", "y", "z"]);
  assert.deepEqual(metricNames("histogram_quantile(0.05, sum by (le) (rate(h_bucket[5m]))) > 1e3"), ["h_bucket"]);
  assert.deepEqual(metricNames('up{job="a"} == 0 or absent(up{job="a"}) unless bool ignoring (instance) vector(1)'), ["up"]);
  assert.deepEqual(templateQueryMetricNames("label_values(g, job)"), ["g"]);
  assert.deepEqual(templateQueryMetricNames("label_values(job)"), []);
  const exposed = exposedMetricNames("# HELP h_seconds x\n# TYPE h_seconds histogram\n# TYPE c_total counter\n");
  assert.deepEqual([...exposed].sort(), ["c_total", "h_seconds", "h_seconds_bucket", "h_seconds_count", "h_seconds_sum"]);
});

test("the dashboard reads from a Prometheus data source variable, never a fixed one", () => {
  const dashboard = readDashboard();
  assert.ok(dashboard.templating.list.some((v) => v.name === "datasource" && v.type === "datasource" && v.query === "prometheus"));
  for (const panel of allPanels(dashboard.panels).filter((p) => p.targets)) {
    for (const source of [panel.datasource, ...panel.targets!.map((t) => t.datasource)]) {
      assert.deepEqual(source, { type: "prometheus", uid: "${datasource}" }, panel.title);
    }
  }
});

describe("the alert rules and the dashboard name only metrics the service exports", { timeout: HANG_TIMEOUT_MS }, () => {
  let data: Awaited<ReturnType<typeof sqliteBackend.create>>;
  let server: ServerProcess;
  before(async () => {
    data = await sqliteBackend.create();
    server = await startServer({ DATABASE_URL: data.databaseUrl, ROLE: "all" });
  });
  after(async () => {
    await server?.stop();
    await data?.cleanup();
  });

  test("every name in the rules and the dashboard is in a scrape of a real server", async () => {
    const response = await fetch(`${server.baseUrl}/metrics`);
    assert.equal(response.status, 200);
    const exported = exposedMetricNames(await response.text());
    const uses = namesInUse();
    assert.ok(uses.size >= 10, `found only ${[...uses.keys()].join(", ")}`);
    const unknown = [...uses.entries()].filter(([name]) => !exported.has(name) && !PROMETHEUS_OWN.has(name)).map(([name, where]) => `${name} (${where.join(", ")})`);
    assert.deepEqual(unknown, [], "named but not exported");
    // SPEC §17's gauge is among them, and is exported.
    assert.ok(uses.has("work_item_api_items_overdue") && exported.has("work_item_api_items_overdue"));
  });
});
