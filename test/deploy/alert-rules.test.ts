/**
 * The Prometheus alerting rules of deploy/prometheus (SPEC §17): promtool accepts them and passes
 * their unit tests, each alert is tested with series that make it fire and series that do not,
 * and each has its section in the runbook. promtool comes from Debian's `prometheus` package;
 * without it the promtool tests skip loudly, except in CI (.ci/run installs it).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { parse } from "yaml";
import { REPO_ROOT } from "../helpers/processes.ts";

const RULES_DIR = join(REPO_ROOT, "deploy", "prometheus");
const RULES_FILE = "work-item-api.rules.yml";
const RULES_TEST_FILE = "work-item-api.rules.test.yml";

interface Rule {
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleTests {
  tests: Array<{ name: string; alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
}

const rules = (parse(readFileSync(join(RULES_DIR, RULES_FILE), "utf8")) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules);
const alerts = rules.filter((rule): rule is Rule & { alert: string } => rule.alert !== undefined);

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const promtoolMissing = promtool.error !== undefined || promtool.status !== 0;
const inCi = process.env.CI === "true" || process.env.CI === "1";
if (promtoolMissing && !inCi) {
  process.stderr.write("\n!!! promtool is missing: the alert rules' promtool tests are SKIPPED. Install it with: apt-get update && apt-get install -y prometheus\n\n");
}

describe("alert rules with promtool", { skip: promtoolMissing && !inCi ? "promtool is missing (apt-get install -y prometheus)" : false }, () => {
  const run = (...args: string[]) => {
    assert.ok(!promtoolMissing, "promtool is missing; CI must install it (.ci/run does: Debian's prometheus package)");
    const result = spawnSync("promtool", args, { cwd: RULES_DIR, encoding: "utf8", timeout: 60_000 });
    assert.equal(result.status, 0, `promtool ${args.join(" ")}:\n${result.stdout}${result.stderr}`);
    return result.stdout;
  };

  test("promtool check rules accepts the rules file", () => {
    assert.match(run("check", "rules", RULES_FILE), new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  test("promtool test rules: every alert fires on its series and stays quiet on the others", () => {
    assert.match(run("test", "rules", RULES_TEST_FILE), /SUCCESS/);
  });
});

test("SPEC §17's alerts are all there", () => {
  const expected = [
    "WorkItemApiBotLapsStalled",
    "WorkItemApiAuthorityBreakerOpen",
    "WorkItemApiAuthorityRefusingCalls",
    "WorkItemApiItemsOverdue",
    "WorkItemApiStoreShardsUnreachable",
    "WorkItemApiSubmitsAfterDeadline",
    "WorkItemApiWebhookDeliveriesFailing",
    "WorkItemApiWebhookBacklogGrowing",
    "WorkItemApiServerErrors",
    "WorkItemApiTargetDown",
  ];
  assert.deepEqual(alerts.map((rule) => rule.alert).sort(), expected.sort());
});

test("each alert's unit tests have an evaluation where it fires and one where it does not", () => {
  const ruleTests = parse(readFileSync(join(RULES_DIR, RULES_TEST_FILE), "utf8")) as RuleTests;
  const evaluations = ruleTests.tests.flatMap((group) => group.alert_rule_test ?? []);
  for (const { alert } of alerts) {
    const own = evaluations.filter((evaluation) => evaluation.alertname === alert);
    assert.ok(own.some((evaluation) => (evaluation.exp_alerts ?? []).length > 0), `${alert}: no evaluation where it fires`);
    assert.ok(own.some((evaluation) => (evaluation.exp_alerts ?? []).length === 0), `${alert}: no evaluation where it stays quiet`);
  }
});

test("each alert has its section in the runbook, and its runbook annotation leads there", () => {
  const operations = readFileSync(join(REPO_ROOT, "docs", "operations.md"), "utf8");
  const heading = "\n## Alert runbook\n";
  const runbookStart = operations.indexOf(heading);
  assert.ok(runbookStart >= 0, "docs/operations.md has a section '## Alert runbook'");
  const runbook = operations.slice(runbookStart + heading.length);
  assert.doesNotMatch(runbook, /^## /m, "the runbook is the last section");
  const sections = new Map<string, string>();
  for (const part of runbook.split(/^### /m).slice(1)) {
    const [heading, ...body] = part.split("\n");
    sections.set(heading!.trim(), body.join("\n"));
  }
  for (const { alert, annotations } of alerts) {
    const section = sections.get(alert);
    assert.ok(section, `docs/operations.md: no '### ${alert}' in the Alert runbook`);
    for (const part of ["What it means", "Where to look", "What to do"]) assert.match(section, new RegExp(`\\*\\*${part}\\.?\\*\\*`), `${alert}: no '${part}'`);
    assert.equal(annotations?.runbook, `docs/operations.md#${alert.toLowerCase()}`, `${alert}: its runbook annotation`);
    assert.ok(annotations?.summary, `${alert}: a summary`);
  }
});
