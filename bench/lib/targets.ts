/** The targets, evaluated on one run's measurements. */
import type { Measurement, Target } from "./model.ts";

const find = (ms: Measurement[], name: string, phase = "") => ms.find((m) => m.name === name && m.phase === phase);
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

export function evaluateTargets(ms: Measurement[], store: "sqlite" | "postgres"): Target[] {
  const targets: Target[] = [];
  const add = find(ms, "AddWorkItemCreate");
  if (add?.ratioToCeiling !== undefined) {
    if (store === "sqlite") {
      targets.push({ name: "AddWorkItemCreate throughput", goal: "≥ 35% of ceiling POST", measured: pct(add.ratioToCeiling), met: add.ratioToCeiling >= 0.35 });
    }
    targets.push({
      name: "AddWorkItemCreate p99",
      goal: "≤ 10 ms",
      measured: `${add.load.latencyMs.p99.toFixed(2)} ms`,
      met: add.load.latencyMs.p99 <= 10,
    });
  }
  const ping = find(ms, "Ping");
  if (ping?.ratioToCeiling !== undefined) {
    targets.push({ name: "Ping throughput", goal: "≥ 60% of ceiling GET", measured: pct(ping.ratioToCeiling), met: ping.ratioToCeiling >= 0.6 });
  }
  const auth = find(ms, "Authenticate");
  if (auth?.ratioToCeiling !== undefined) {
    targets.push({ name: "Authenticate throughput", goal: "≥ 25% of ceiling POST", measured: pct(auth.ratioToCeiling), met: auth.ratioToCeiling >= 0.25 });
  }
  const baseline = find(ms, "pg baseline POST");
  if (add && baseline) {
    const times = add.load.requestsPerSecond / baseline.load.requestsPerSecond;
    targets.push({ name: "AddWorkItemCreate vs one transaction per request (pg pool)", goal: "≥ 3×", measured: `${times.toFixed(2)}×`, met: times >= 3 });
  }
  const served = ms.filter((m) => m.target === "server");
  if (served.length > 0) {
    const peak = Math.max(...served.map((m) => Math.max(m.peakRssMb, m.hwmMb)));
    targets.push({ name: "Peak RSS of the server", goal: "≤ 200 MB", measured: `${peak.toFixed(0)} MB`, met: peak <= 200 });
  }
  // Growth: measurements of one route and size are averaged over their rounds.
  const mean = (name: string, phase: string, value: (m: Measurement) => number) => {
    const runs = ms.filter((m) => m.name === name && m.phase === phase);
    return runs.length === 0 ? undefined : runs.reduce((sum, m) => sum + value(m), 0) / runs.length;
  };
  // Phases are named "empty store", "10k items", "1M items": sizes are read back from the names.
  const itemsIn = (phase: string) => {
    const match = /^([\d.,]+)([kM]) items$/.exec(phase);
    return match ? Number(match[1]!.replace(/,/g, "")) * (match[2] === "M" ? 1_000_000 : 1000) : undefined;
  };
  const sized = [...new Set(ms.filter((m) => m.target === "server").map((m) => m.phase))]
    .filter((phase) => itemsIn(phase) !== undefined)
    .sort((a, b) => itemsIn(a)! - itemsIn(b)!);
  const small = sized.length > 1 ? sized[0] : undefined;
  const large = sized.at(-1);
  const empty = ms.some((m) => m.phase === "empty store") ? "empty store" : undefined;
  const rps = (m: Measurement) => m.load.requestsPerSecond;
  const p99 = (m: Measurement) => m.load.latencyMs.p99;
  if (large && empty) {
    const [big, none] = [mean("AddWorkItemCreate", large, rps), mean("AddWorkItemCreate", empty, rps)];
    if (big !== undefined && none !== undefined) {
      targets.push({ name: `AddWorkItemCreate @ ${large} vs empty store`, goal: "≥ 90%", measured: `${pct(big / none)} (${Math.round(big)} vs ${Math.round(none)} req/s)`, met: big / none >= 0.9 });
    }
  }
  if (large && small) {
    const [big, few] = [mean("WorkItems", large, p99), mean("WorkItems", small, p99)];
    if (big !== undefined && few !== undefined) {
      targets.push({ name: `WorkItems page p99 @ ${large} vs @ ${small}`, goal: "≤ 1.5×", measured: `${(big / few).toFixed(2)}× (${big.toFixed(2)} vs ${few.toFixed(2)} ms)`, met: big / few <= 1.5 });
    }
  }
  return targets;
}
