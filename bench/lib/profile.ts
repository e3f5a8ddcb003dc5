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

export function summariseProfile(file: string, route: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Self time per node from the sample stream (each sample's delta is the time it stands for).
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
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
  };
}
