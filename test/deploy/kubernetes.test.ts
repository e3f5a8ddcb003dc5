/**
 * The Kubernetes base (deploy/kubernetes/, SPEC §21), without a cluster:
 * - its PrometheusRule is what `npm run manifests` makes of deploy/prometheus/ (one source);
 * - rendered with `kubectl kustomize`, every object validates against the Kubernetes API schemas
 *   (kubernetes-models, and its Prometheus Operator package for the two custom kinds);
 * - every variable it sets is one the configuration knows (src/config.ts), settings and secrets
 *   come from the ConfigMap and the Secret, never inlined;
 * - every pod runs as the image's non-root user with a read-only root, no privilege escalation,
 *   every capability dropped and the runtime's seccomp profile, with requests and limits; the API
 *   has its probes, two replicas and a disruption budget.
 * test/image/image.test.ts runs the manifests with podman.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { Job } from "kubernetes-models/batch/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Secret, Service } from "kubernetes-models/v1";
import { prometheusRuleManifest, PROMETHEUS_RULE } from "../../scripts/prometheus-rule.ts";
import { EnvSchema } from "../../src/config.ts";
import { renderKustomizeBase, type KubeObject } from "../helpers/kustomize.ts";

const MODELS: Record<string, new (object: never) => { validate(): void }> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "batch/v1/Job": Job,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};

const objects = renderKustomizeBase();
const ofKind = (kind: string) => objects!.filter((object) => object.kind === kind);

interface Container {
  name: string;
  env?: Array<{ name: string }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
}
interface PodSpec {
  securityContext?: Record<string, unknown>;
  containers: Container[];
}
const podSpecOf = (object: KubeObject) => (object.spec as { template: { spec: PodSpec } }).template.spec;

test("the PrometheusRule is made from deploy/prometheus/, so the two cannot drift (npm run manifests)", () => {
  assert.equal(readFileSync(PROMETHEUS_RULE, "utf8"), prometheusRuleManifest());
});

describe("the Kubernetes base", { skip: objects === undefined ? "no kubectl here to render it (kubectl kustomize)" : false }, () => {
  test("every object validates against the API schemas of its kind", () => {
    assert.deepEqual(
      objects!.map((object) => `${object.kind}/${object.metadata.name}`).sort(),
      [
        "ConfigMap/work-item-api-settings",
        "Deployment/work-item-api",
        "Deployment/work-item-api-worker",
        "Job/work-item-api-migrate",
        "PodDisruptionBudget/work-item-api",
        "PrometheusRule/work-item-api",
        "Secret/work-item-api-secrets",
        "Service/work-item-api",
        "Service/work-item-api-worker",
        "ServiceMonitor/work-item-api",
      ],
    );
    for (const object of objects!) {
      const Model = MODELS[`${object.apiVersion}/${object.kind}`];
      assert.ok(Model, `a schema for ${object.apiVersion} ${object.kind}`);
      assert.doesNotThrow(() => new Model(object as never).validate(), `${object.kind}/${object.metadata.name}`);
    }
  });

  test("every variable it sets is one the configuration knows, and only the ConfigMap and the Secret set them", () => {
    const known = new Set(Object.keys(EnvSchema.properties));
    const set = [...ofKind("ConfigMap").flatMap((map) => Object.keys(map.data ?? {})), ...ofKind("Secret").flatMap((secret) => Object.keys(secret.stringData ?? {}))];
    assert.deepEqual(set.filter((name) => !known.has(name)), [], "unknown variables");
    for (const secret of ["DATABASE_URL", "JWT_SECRET", "DATA_ENCRYPTION_KEY"]) assert.ok(Object.keys(ofKind("Secret")[0]!.stringData!).includes(secret), `${secret} is a secret`);
    for (const workload of [...ofKind("Deployment"), ...ofKind("Job")]) {
      for (const container of podSpecOf(workload).containers) {
        assert.deepEqual(container.env ?? [], [], `${workload.metadata.name}: nothing inlined`);
        assert.deepEqual(container.envFrom, [{ configMapRef: { name: "work-item-api-settings" } }, { secretRef: { name: "work-item-api-secrets" } }]);
      }
    }
  });

  test("every pod: non-root 10001, read-only root, no privilege escalation, no capability, seccomp, requests and limits", () => {
    for (const workload of [...ofKind("Deployment"), ...ofKind("Job")]) {
      const pod = podSpecOf(workload);
      assert.deepEqual(pod.securityContext, { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } }, workload.metadata.name);
      for (const container of pod.containers) {
        assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } }, container.name);
        for (const resource of ["cpu", "memory"]) {
          assert.ok(container.resources?.requests?.[resource] && container.resources.limits?.[resource], `${container.name}: ${resource} requested and limited`);
        }
      }
    }
  });

  test("the API: two replicas, ready on /readyz, alive on /healthz, kept by a disruption budget, scraped by the ServiceMonitor", () => {
    const api = ofKind("Deployment").find((deployment) => deployment.metadata.name === "work-item-api")!;
    assert.equal((api.spec as { replicas: number }).replicas, 2);
    const [container] = podSpecOf(api).containers;
    assert.equal(container!.readinessProbe?.httpGet?.path, "/readyz");
    assert.equal(container!.livenessProbe?.httpGet?.path, "/healthz");
    const budget = ofKind("PodDisruptionBudget")[0]!.spec as { minAvailable: number; selector: { matchLabels: Record<string, string> } };
    assert.equal(budget.minAvailable, 1);
    assert.deepEqual(budget.selector.matchLabels, (api.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
  });

  test("the worker: alive on /healthz, ready on /readyz; the ServiceMonitor scrapes its /metrics and the API's, as the job the alerts name", () => {
    const worker = ofKind("Deployment").find((deployment) => deployment.metadata.name === "work-item-api-worker")!;
    const [container] = podSpecOf(worker).containers;
    assert.equal(container!.readinessProbe?.httpGet?.path, "/readyz");
    assert.equal(container!.livenessProbe?.httpGet?.path, "/healthz");
    const monitor = ofKind("ServiceMonitor")[0]!.spec as {
      jobLabel: string;
      selector: { matchExpressions: Array<{ key: string; operator: string; values: string[] }> };
      endpoints: Array<{ port: string; path: string }>;
    };
    assert.deepEqual(monitor.endpoints.map(({ port, path }) => ({ port, path })), [{ port: "http", path: "/metrics" }]);
    const selects = (labels: Record<string, string> = {}) => monitor.selector.matchExpressions.every(({ key, values }) => values.includes(labels[key] ?? ""));
    const scraped = ofKind("Service").filter((service) => selects(service.metadata.labels));
    assert.deepEqual(scraped.map((service) => service.metadata.name).sort(), ["work-item-api", "work-item-api-worker"]);
    for (const service of scraped) {
      const ports = (service.spec as { ports: Array<{ name: string }> }).ports;
      assert.ok(ports.some((port) => port.name === "http"), `${service.metadata.name} has the port the ServiceMonitor scrapes`);
      assert.equal(service.metadata.labels?.[monitor.jobLabel], "work-item-api", "the job is named work-item-api");
    }
  });
});
