/**
 * Process entry: parse config, open the store, run the role, and shut down gracefully on
 * SIGTERM/SIGINT.
 * - ROLE=all (default): HTTP API and worker services in one process.
 * - ROLE=api: HTTP API only; stateless, run N of them behind a load balancer.
 * - ROLE=worker: worker services only (see src/worker.ts); never listens.
 * Split roles need a store several processes can write (flags.singleWriter false): with the
 * embedded SQLite store the process refuses to start as api or worker, and says so.
 */
import { buildApp } from "./app.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics.ts";
import { openStore } from "./store/open-store.ts";
import { startWorkerServices, type Stopper } from "./worker.ts";

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
  if (config.role !== "all" && store.flags.singleWriter) {
    await store.close();
    process.stderr.write(
      `work-item-api: ROLE=${config.role} splits the service over several processes, but the embedded SQLite store allows one writer. ` +
        "Run ROLE=all (the default) with SQLite, or set DATABASE_URL=postgres://… to run api and worker processes apart.\n",
    );
    process.exit(1);
  }
  const stoppers: Stopper[] = [];
  let address: string | undefined;
  // One registry per process: the API, the bot and the dispatcher record into it.
  const metrics = createMetrics({ defaultMetrics: true });

  if (config.role === "all" || config.role === "api") {
    const app = await buildApp(config, { store, logger, metrics });
    address = await app.listen({ port: config.port, host: config.host });
    stoppers.push(() => app.close());
  }
  if (config.role === "all" || config.role === "worker") {
    stoppers.push(...(await startWorkerServices({ config, store, logger })));
    if (config.role === "worker") {
      // No listening socket holds the event loop open in a worker; stay up until signalled.
      const keepAlive = setInterval(() => undefined, 2 ** 30);
      stoppers.push(async () => clearInterval(keepAlive));
    }
  }
  logger.info({ role: config.role, store: config.store.kind, address }, "work-item-api started");

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
