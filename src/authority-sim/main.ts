/**
 * `npm run authority-sim -- [--host H] [--port P] [--latency-ms N] [--error-rate R] [--outage]`:
 * the authority simulator as its own process. Flags override the AUTHORITY_SIM_* variables.
 * Prints one JSON line `{"url": …}` on stdout once it listens; stops on SIGTERM/SIGINT.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig, type AuthoritySimSettings } from "../config.ts";
import { startAuthoritySim } from "./server.ts";

const USAGE = "usage: npm run authority-sim -- [--host H] [--port P] [--latency-ms N] [--error-rate 0..1] [--outage] [--decision-delay-ms N]";

function settingsFrom(argv: string[]): AuthoritySimSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: "string" },
      port: { type: "string" },
      "latency-ms": { type: "string" },
      "error-rate": { type: "string" },
      outage: { type: "boolean" },
      "decision-delay-ms": { type: "string" },
    },
    strict: true,
  });
  // Flags go through the same schema as the environment, so both are checked alike.
  const config = loadConfig(undefined, {
    AUTHORITY_SIM_HOST: values.host,
    AUTHORITY_SIM_PORT: values.port,
    AUTHORITY_SIM_LATENCY_MS: values["latency-ms"],
    AUTHORITY_SIM_ERROR_RATE: values["error-rate"],
    AUTHORITY_SIM_OUTAGE: values.outage === undefined ? undefined : String(values.outage),
    AUTHORITY_SIM_DECISION_DELAY_MS: values["decision-delay-ms"],
  });
  return config.authoritySim;
}

async function main(): Promise<void> {
  let settings: AuthoritySimSettings;
  try {
    settings = settingsFrom(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`authority-sim: ${error instanceof Error ? error.message : String(error)}\n${error instanceof ConfigError ? "" : `${USAGE}\n`}`);
    process.exit(2);
  }
  const sim = await startAuthoritySim(settings);
  process.stdout.write(`${JSON.stringify({ url: sim.url, ...sim.behaviour })}\n`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`authority-sim: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
