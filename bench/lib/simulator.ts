/** The authority simulator of this checkout, as the bot benches run it: a process of its own on loopback. */
import type { SimBehaviour, SimStats } from "../../src/authority-sim/server.ts";
import { parseLine, startScript } from "../../scripts/lib/processes.ts";

export interface BenchSimulator {
  url: string;
  /** Changes its behaviour (POST /_sim/config). */
  configure(patch: Partial<SimBehaviour>): Promise<void>;
  /** Its totals, without the per-key counts (GET /_sim/stats?keys=false). */
  totals(): Promise<Omit<SimStats, "keys">>;
  close(): Promise<unknown>;
}

/**
 * The simulator in a process of its own, as a remote authority would be: in the bot's process its
 * timers and HTTP work would queue behind the bot's and add to every call's latency.
 */
export async function startSimulator(latencyMs: number): Promise<BenchSimulator> {
  const child = startScript("src/authority-sim/main.ts", ["--port", "0", "--latency-ms", String(latencyMs)], { PATH: process.env.PATH, HOME: process.env.HOME });
  const url = await child.waitForLine("the simulator to listen", (line) => parseLine(line)?.url as string | undefined, 60_000);
  return {
    url,
    async configure(patch) {
      const response = await fetch(`${url}/_sim/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(patch) });
      if (response.status !== 200) throw new Error(`the simulator refused ${JSON.stringify(patch)}: ${response.status} ${await response.text()}`);
    },
    async totals() {
      const response = await fetch(`${url}/_sim/stats?keys=false`);
      if (response.status !== 200) throw new Error(`GET /_sim/stats answered ${response.status}`);
      return (await response.json()) as Omit<SimStats, "keys">;
    },
    close: () => child.stop(),
  };
}

/** An item the simulator registers: export date a month ahead, valid numbers. */
export function registrableItem(customerReference: string): Record<string, unknown> {
  return {
    customerReference,
    documentReference: null,
    productName: { sendValue: "RUNDVEEMEST", documentValue: "Rundveemest" },
    destinationCountry: { sendValue: "DE" },
    exportDate: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    senderChamberOfCommerceNo: { sendValue: "12345678" },
    senderDomestic: { sendValue: "true" },
    receiverChamberOfCommerceNo: { sendValue: "87654321" },
    receiverDomestic: { sendValue: "false" },
    plannedLoad: 31.5,
  };
}
