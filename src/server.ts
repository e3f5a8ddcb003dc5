/**
 * Process entry: parse config, open the store, run the role (all | api | worker), and shut down
 * gracefully on SIGTERM/SIGINT (src/lifecycle/shutdown.ts).
 */
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { Shutdown } from "./lifecycle/shutdown.ts";
import { createLogger } from "./logger.ts";
import { openStore } from "./store/open-store.ts";

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`work-item-api: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config);
  const store = await openStore(config.store);
  const shutdown = new Shutdown(logger, config.shutdownTimeoutMs);
  // Background services (bot scheduler, webhook dispatcher) register with shutdown.onDrain too:
  // their stop() must finish the item in hand or release its lease, and resolve.
  shutdown.onRelease("store", () => store.close());

  let address: string | undefined;
  if (config.role === "all" || config.role === "api") {
    const app = await buildApp(config, { store, logger });
    address = await app.listen({ port: config.port, host: config.host });
    shutdown.onDrain("http", () => app.close());
  }
  shutdown.installSignalHandlers();
  logger.info({ role: config.role, store: config.store.kind, port: config.port, address }, "work-item-api started");
}

main().catch((error: unknown) => {
  process.stderr.write(`work-item-api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
