/** The Kubernetes base of deploy/kubernetes/ as `kubectl kustomize` renders it, for the tests. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "./processes.ts";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** The base as kustomize renders it; undefined where kubectl is not installed. */
export function renderKustomizeBase(): KubeObject[] | undefined {
  const rendered = spawnSync("kubectl", ["kustomize", `${REPO_ROOT}/deploy/kubernetes`], { encoding: "utf8" });
  if (rendered.error) return undefined;
  assert.equal(rendered.status, 0, rendered.stderr);
  return parseAllDocuments(rendered.stdout).map((document) => document.toJS() as KubeObject);
}

