/**
 * deploy/compose/compose.yaml (SPEC §21), read without podman: the parts it must run, settings
 * the configuration knows, ports on loopback only, the image of this version, and a Prometheus
 * that scrapes every process of the service and loads the shipped rules.
 * test/image/image.test.ts brings it up with podman-compose.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parse } from "yaml";
import { EnvSchema } from "../../src/config.ts";
import { REPO_ROOT } from "../helpers/processes.ts";

interface ComposeService {
  image: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  read_only?: boolean;
  depends_on?: string[];
}

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");
const compose = parse(read("deploy/compose/compose.yaml"), { merge: true }) as { services: Record<string, ComposeService> };
const services = compose.services;
const version = (JSON.parse(read("package.json")) as { version: string }).version;
const SERVICE_ROLES = ["api-1", "api-2", "worker"];

test("compose runs PostgreSQL, a one-shot migration, two APIs, a worker, the simulator and Prometheus", () => {
  assert.deepEqual(Object.keys(services).sort(), ["api-1", "api-2", "authority-sim", "migrate", "postgres", "prometheus", "worker"]);
  assert.deepEqual(services.migrate!.command, ["db", "migrate"]);
  assert.deepEqual(services["api-1"]!.command, ["serve", "api"]);
  assert.deepEqual(services["api-2"]!.command, ["serve", "api"]);
  assert.deepEqual(services.worker!.command, ["serve", "worker"]);
  assert.deepEqual(services["authority-sim"]!.command, ["authority-sim"]);
  for (const name of SERVICE_ROLES) assert.ok(services[name]!.depends_on?.includes("migrate"), `${name} comes after the migration`);
});

test("the service's containers: this version's image, a read-only root, settings the configuration knows", () => {
  const known = new Set(Object.keys(EnvSchema.properties));
  for (const name of [...SERVICE_ROLES, "migrate", "authority-sim"]) {
    const service = services[name]!;
    assert.equal(service.image, `\${WORK_ITEM_API_IMAGE:-localhost/work-item-api:${version}}`, name);
    assert.equal(service.read_only, true, name);
    assert.deepEqual(Object.keys(service.environment ?? {}).filter((variable) => !known.has(variable)), [], `${name}: unknown variables`);
  }
  assert.equal(services.worker!.environment?.MIGRATE_ON_START, "false", "only the migration migrates");
});

test("every published port is on 127.0.0.1", () => {
  const published = Object.values(services).flatMap((service) => service.ports ?? []);
  assert.ok(published.length >= 3);
  for (const port of published) assert.match(port, /^127\.0\.0\.1:/);
});

test("Prometheus scrapes both APIs and the worker as the job the alerts name, and loads the shipped rules", () => {
  const prometheus = parse(read("deploy/compose/prometheus.yml")) as { rule_files: string[]; scrape_configs: Array<{ job_name: string; metrics_path: string; static_configs: Array<{ targets: string[] }> }> };
  const [job] = prometheus.scrape_configs;
  assert.equal(job!.job_name, "work-item-api");
  assert.deepEqual(job!.static_configs.flatMap((config) => config.targets).sort(), SERVICE_ROLES.map((name) => `${name}:8080`));
  const mounts = services.prometheus!.volumes!;
  assert.ok(mounts.includes("../prometheus/work-item-api.rules.yml:/etc/prometheus/rules/work-item-api.rules.yml:ro"), "the shipped rules, as they are");
  assert.deepEqual(prometheus.rule_files, ["/etc/prometheus/rules/*.rules.yml"]);
});
