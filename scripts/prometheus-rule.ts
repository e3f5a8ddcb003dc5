/**
 * `npm run manifests`: deploy/kubernetes/prometheus-rule.yaml, the Prometheus Operator's form of
 * deploy/prometheus/work-item-api.rules.yml (SPEC §21), made from it so the two cannot drift;
 * test/deploy/kubernetes.test.ts fails when the file is not what this makes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

const RULES = fileURLToPath(new URL("../deploy/prometheus/work-item-api.rules.yml", import.meta.url));
export const PROMETHEUS_RULE = fileURLToPath(new URL("../deploy/kubernetes/prometheus-rule.yaml", import.meta.url));

export function prometheusRuleManifest(rules = readFileSync(RULES, "utf8")): string {
  const { groups } = parse(rules) as { groups: unknown[] };
  const manifest = { apiVersion: "monitoring.coreos.com/v1", kind: "PrometheusRule", metadata: { name: "work-item-api" }, spec: { groups } };
  return `# Made by \`npm run manifests\` from deploy/prometheus/work-item-api.rules.yml: edit that file, not this one.\n${stringify(manifest, { lineWidth: 0 })}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PROMETHEUS_RULE, prometheusRuleManifest());
  process.stdout.write(`wrote ${PROMETHEUS_RULE}\n`);
}
