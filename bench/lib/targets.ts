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
  const phases = [...new Set(ms.filter((m) => m.target === "server").map((m) => m.phase).filter(Boolean))];
  const big = phases.at(-1);
  const small = phases[0];
  if (big && small && big !== small) {
    const addBig = find(ms, "AddWorkItemCreate", big);
    const addSmall = find(ms, "AddWorkItemCreate", small);
    if (addBig && add) {
      const ratio = addBig.load.requestsPerSecond / add.load.requestsPerSecond;
      targets.push({ name: `AddWorkItemCreate @ ${big} vs empty store`, goal: "≥ 90%", measured: pct(ratio), met: ratio >= 0.9 });
    }
    if (addBig && addSmall) {
      const ratio = addBig.load.requestsPerSecond / addSmall.load.requestsPerSecond;
      targets.push({ name: `AddWorkItemCreate @ ${big} vs @ ${small}`, goal: "≥ 90%", measured: pct(ratio), met: ratio >= 0.9 });
    }
    const pageBig = find(ms, "WorkItems", big);
    const pageSmall = find(ms, "WorkItems", small);
    if (pageBig && pageSmall) {
      const ratio = pageBig.load.latencyMs.p99 / pageSmall.load.latencyMs.p99;
      targets.push({
        name: `WorkItems page p99 @ ${big} vs @ ${small}`,
        goal: "≤ 1.5×",
        measured: `${ratio.toFixed(2)}× (${pageBig.load.latencyMs.p99.toFixed(2)} vs ${pageSmall.load.latencyMs.p99.toFixed(2)} ms)`,
        met: ratio <= 1.5,
      });
    }
  }
  return targets;
}
