/**
 * Process entry: parse config, open the store, run the role (all | api | worker), and shut down
 * gracefully on SIGTERM/SIGINT.
 */
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { createLogger } from "./logger.ts";
import { openStore } from "./store/open-store.ts";
import { startWorkerRole } from "./worker.ts";

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
  const stoppers: Array<() => Promise<void>> = [];

  let address: string | undefined;
  if (config.role === "all" || config.role === "api") {
    const app = await buildApp(config, { store, logger });
    address = await app.listen({ port: config.port, host: config.host });
    stoppers.push(() => app.close());
  }
  if (config.role === "all" || config.role === "worker") {
    const worker = await startWorkerRole(config, { store, logger });
    stoppers.push(() => worker.stop());
  }
  logger.info({ role: config.role, store: config.store.kind, port: config.port, address }, "work-item-api started");

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      process.exit(1);
    }, 10_000);
    deadline.unref();
    for (const stopper of stoppers.reverse()) await stopper();
    await store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(`work-item-api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
