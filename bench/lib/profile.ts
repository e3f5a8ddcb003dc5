/**
 * Reads a V8 .cpuprofile (from node --cpu-prof) and ranks where the time went: self time per
 * function, and per area (a package, Node's internals, our own code, GC).
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { ProfileSummary } from "./model.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export function areaOf(url: string, functionName: string): string {
  if (url === "") {
    if (functionName === "(garbage collector)") return "GC";
    if (functionName === "(idle)") return "idle";
    if (functionName === "(program)") return "V8/native (program)";
    // Code compiled at run time with new Function: fast-json-stringify serialisers, Ajv validators.
    if (/^anonymous\d+$/.test(functionName) || /^validate\d+$/.test(functionName)) return "generated (serialisers, validators)";
    return `native: ${functionName || "(anonymous)"}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith("node:")) return url.startsWith("node:internal/") ? `node:${url.slice("node:internal/".length).split("/")[0]}` : url;
  const ours = /\/dist\/(.+)$/.exec(url) ?? /\/src\/(.+)$/.exec(url);
  if (ours) return `ours: ${ours[1]!.split("/").slice(0, -1).join("/") || "."}`;
  return basename(url);
}

/**
 * The phases of a request, each recognised by a frame on the stack. A sample belongs to the
 * innermost frame that names a phase, so the JSON.parse a row mapper calls counts as row
 * mapping and the SQLite call under a handler as the store; native frames and Node's
 * internals pass to their callers, unless nothing above them names a phase.
 */
const PHASES: Array<[phase: string, test: (url: string, functionName: string) => boolean]> = [
  ["serialize (fast-json-stringify, reply)", (url, fn) => url.includes("fast-json-stringify") || (url === "" && /^anonymous\d*$/.test(fn)) || (url.includes("fastify/lib/reply") && /serial/i.test(fn))],
  ["validate (Ajv, schemas)", (url, fn) => (url === "" && /^validate\d+$/.test(fn)) || url.includes("/ajv") || url.includes("fastify/lib/validation") || url.includes("/http/validation")],
  ["parse body (JSON)", (url) => url.includes("secure-json-parse") || url.includes("contentTypeParser") || url.includes("/http/json-body")],
  ["auth (JWT, keys)", (url) => url.includes("fast-jwt") || url.includes("/auth/")],
  ["rate limit", (url) => url.includes("rate-limiter-flexible") || url.includes("/rate-limit/")],
  ["row → view mapping", (url) => url.includes("/store/rows.")],
  ["store (SQL, driver, group commit)", (url) => url.includes("better-sqlite3") || url.includes("/node_modules/pg") || url.includes("/store/")],
  ["logging, metrics, tracing", (url) => url.includes("pino") || url.includes("sonic-boom") || url.includes("prom-client") || url.includes("/request-logger") || url.includes("/observability") || url.includes("/metrics") || url.includes("request-duration")],
  ["route handlers (ours)", (url) => url.includes("/surfaces/") || url.includes("/domain/")],
  ["hooks and app (ours)", (url) => /\/(dist|src)\//.test(url) && !url.includes("node_modules")],
  ["fastify routing and lifecycle", (url) => url.includes("node_modules/fastify") || url.includes("find-my-way") || url.includes("avvio") || url.includes("light-my-request") || url.includes("@fastify/")],
  ["HTTP and sockets (Node)", (url) => url.startsWith("node:") || url.includes("_http_")],
];

function phaseOf(node: ProfileNode | undefined, parentOf: Map<number, number>, byId: Map<number, ProfileNode>): string {
  const leaf = node?.callFrame.functionName ?? "";
  if (leaf === "(garbage collector)") return "GC";
  if (leaf === "(program)") return "V8 (program)";
  // A native leaf (a syscall, a builtin) belongs to the first caller with a source: when that is
  // Node's own code (a socket write, a timer), the time is Node's, not that of whoever called it.
  const firstWithSource = (() => {
    for (let frame = node; frame; frame = byId.get(parentOf.get(frame.id) ?? -1)) if (frame.callFrame.url !== "") return frame.callFrame.url;
    return "";
  })();
  // Posting to a worker thread (the SQLite intake writer) is its caller's, though.
  const nodeOwn = firstWithSource.startsWith("node:") && !firstWithSource.startsWith("node:internal/modules") && !firstWithSource.startsWith("node:internal/worker");
  if (node?.callFrame.url === "" && nodeOwn) return "HTTP and sockets (Node)";
  for (let frame = node; frame; frame = byId.get(parentOf.get(frame.id) ?? -1)) {
    const { url, functionName } = frame.callFrame;
    if (url.startsWith("node:internal/modules") || url.startsWith("node:internal/vm")) return "start-up (loading modules)";
    // Node's own code reaches ours through callbacks (timers, streams): look further up first.
    if (url.startsWith("node:")) continue;
    const match = PHASES.find(([, test]) => test(url, functionName));
    if (match) return match[0];
  }
  for (let frame = node; frame; frame = byId.get(parentOf.get(frame.id) ?? -1)) if (frame.callFrame.url.startsWith("node:")) return "HTTP and sockets (Node)";
  return "other";
}

export function summariseProfile(file: string, route: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Self time per node from the sample stream (each sample's delta is the time it stands for).
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const phases = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    totalUs += us;
    const where = url ? `${areaOf(url, functionName)} ${basename(url)}:${lineNumber + 1}` : "";
    const key = `${functionName}|${where}`;
    const entry = functions.get(key) ?? { name: functionName || "(anonymous)", where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const phase = phaseOf(node, parentOf, byId);
    phases.set(phase, (phases.get(phase) ?? 0) + us);
  }
  const percent = (us: number) => (totalUs === 0 ? 0 : (us / totalUs) * 100);
  return {
    route,
    file,
    totalMs: totalUs / 1000,
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: f.us / 1000, percent: percent(f.us) })),
    byArea: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, selfMs: us / 1000, percent: percent(us) })),
    byPhase: [...phases.entries()].sort((a, b) => b[1] - a[1]).map(([phase, us]) => ({ phase, ms: us / 1000, percent: percent(us) })),
  };
}
