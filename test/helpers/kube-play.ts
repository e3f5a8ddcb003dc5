/**
 * The Kubernetes base run with `podman kube play` (podman 4.3), for test/image/image.test.ts.
 * What podman cannot take is adapted here, and only that; each adaptation says why:
 * - a Secret: podman reads one only from its own secret store, and 4.3 refuses a Kubernetes
 *   Secret there ("illegal base64 data"), so the Secret's values reach the pods as a ConfigMap of
 *   the same name, referred to the same way (envFrom);
 * - ports: podman 4.3 publishes every containerPort on the host, on every interface and at the
 *   same number when no hostPort is given, which two replicas cannot share; the played pods keep
 *   no ports list (they are reached at their address on the test's network) and their probes
 *   name the port by number;
 * - a Job: podman plays no Job, so the migration Job's pod template runs as a Pod (restartPolicy
 *   OnFailure, as in the Job);
 * - Services, the disruption budget and the Prometheus Operator's kinds have no podman meaning;
 *   test/deploy/kubernetes.test.ts validates them.
 * Otherwise the Deployments play as rendered: two API pods, one worker pod, their securityContext, envFrom,
 * resources and volumes.
 */
import { stringify } from "yaml";
import type { KubeObject } from "./kustomize.ts";

export interface PlayFiles {
  /** `--configmap` files: the settings, and the Secret's values as a ConfigMap of its name. */
  configMaps: Array<{ name: string; yaml: string }>;
  /** The migration Job's pod template, as a Pod. */
  migratePod: string;
  /** The api and worker Deployments, as rendered. */
  deployments: string;
}

/** The Secret's references, as ConfigMap references (see the file's comment). */
const secretRefsAsConfigMapRefs = (yaml: string) => yaml.replace(/\bsecretRef:/g, "configMapRef:");

interface PlayedContainer {
  ports?: Array<{ name: string; containerPort: number }>;
  livenessProbe?: { httpGet?: { port: string | number } };
  readinessProbe?: { httpGet?: { port: string | number } };
}

/** The Deployment without its ports list (see the file's comment), its probes naming the port by number. */
function withoutPublishedPorts(deployment: KubeObject): KubeObject {
  const copy = structuredClone(deployment);
  for (const container of (copy.spec as { template: { spec: { containers: PlayedContainer[] } } }).template.spec.containers) {
    const byName = new Map((container.ports ?? []).map((port) => [port.name, port.containerPort]));
    for (const probe of [container.livenessProbe, container.readinessProbe]) {
      if (probe?.httpGet && typeof probe.httpGet.port === "string") probe.httpGet.port = byName.get(probe.httpGet.port) ?? probe.httpGet.port;
    }
    delete container.ports;
  }
  return copy;
}

const named = (objects: KubeObject[], kind: string) => objects.filter((object) => object.kind === kind);

/** The play files of the rendered base, with the settings and secrets `overrides` replaces. */
export function playFiles(objects: KubeObject[], overrides: { settings: Record<string, string>; secrets: Record<string, string> }): PlayFiles {
  const [settings] = named(objects, "ConfigMap");
  const [secret] = named(objects, "Secret");
  const [job] = named(objects, "Job");
  if (!settings || !secret || !job) throw new Error("the base has no ConfigMap, Secret or Job");
  const configMap = (name: string, data: Record<string, string>) => stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data });
  const template = (job.spec as { template: { metadata: KubeObject["metadata"]; spec: Record<string, unknown> } }).template;
  return {
    configMaps: [
      { name: "settings", yaml: configMap(settings.metadata.name, { ...settings.data, ...overrides.settings }) },
      { name: "secrets", yaml: configMap(secret.metadata.name, { ...secret.stringData, ...overrides.secrets }) },
    ],
    migratePod: secretRefsAsConfigMapRefs(stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: job.metadata.name, labels: template.metadata.labels }, spec: template.spec })),
    deployments: secretRefsAsConfigMapRefs(
      named(objects, "Deployment")
        .map((deployment) => stringify(withoutPublishedPorts(deployment)))
        .join("---\n"),
    ),
  };
}

/** A Pod of one container on the test's network, for what the base expects to find running (PostgreSQL, the authority). */
export function companionPod(options: { name: string; image: string; args?: string[]; env?: Record<string, string> }): string {
  return stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: options.name },
    spec: {
      containers: [
        {
          name: options.name,
          image: options.image,
          ...(options.args ? { args: options.args } : {}),
          env: Object.entries(options.env ?? {}).map(([name, value]) => ({ name, value })),
        },
      ],
    },
  });
}
