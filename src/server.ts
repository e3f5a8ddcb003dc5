/**
 * Process entry: parse config, open the store, run the role, and shut down gracefully on
 * SIGTERM/SIGINT.
 * - ROLE=all (default): HTTP API and worker services in one process.
 * - ROLE=api: HTTP API only; stateless, run N of them behind a load balancer.
 * - ROLE=worker: worker services only (see src/worker-role.ts); it listens on PORT for
 *   /healthz, /readyz and /metrics alone, so the platform probes and scrapes it like the API.
 * Split roles scale out on PostgreSQL. On the embedded SQLite store they still work on one host
 * (WAL: writers from several processes take turns on the file lock), so the process only warns.
 */
// First, before anything else loads: see the module for why.
import "./lib/tick-object-shape.ts";
import { buildApp, buildProbeApp } from "./app.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { createLogger } from "./logger.ts";
import { botMetricsEvents, createMetrics, webhookMetricsEvents } from "./metrics.ts";
import { Shutdown } from "./shutdown.ts";
import { startTracing } from "./telemetry/tracing.ts";
import { openStore } from "./store/open-store.ts";
import { createWebhookSecrets } from "./webhooks/secrets.ts";
import { startWorkerRole } from "./worker-role.ts";

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
  // Before anything that starts spans: the tracer provider is global.
  const tracing = await startTracing(config.tracing);
  const logger = createLogger(config);
  const store = await openStore(config.store, { migrations: config.migrateOnStart ? "apply" : "require" });
  if (config.role !== "all" && store.flags.singleWriter) {
    logger.warn(
      { role: config.role },
      "the embedded SQLite store takes one writer at a time: split roles work on this host only; use DATABASE_URL=postgres://… to scale out",
    );
  }
  // After the migrations: secrets stored before encryption at rest are encrypted now (idempotent).
  const encrypted = await createWebhookSecrets(store, config).encryptStored();
  if (encrypted > 0) logger.info({ companies: encrypted }, "webhook secrets stored in plain text were encrypted");
  if (config.dataEncryptionKey === undefined && store.kind === "postgres") {
    logger.warn("DATA_ENCRYPTION_KEY is unset: webhook secrets are encrypted with a generated key kept in the same database; set it to keep the key apart from the data");
  }
  const shutdown = new Shutdown(logger, config.shutdownTimeoutMs);
  shutdown.onRelease("store", () => store.close());
  shutdown.onRelease("tracing", () => tracing.shutdown());
  // One registry per process: the API, the bot and the dispatcher record into it.
  const metrics = createMetrics({ defaultMetrics: true });
  // Read on every scrape, from the database: the backlog of every process, whichever role scrapes.
  metrics.setOutboxBacklogSource(() => store.countPendingWebhookDeliveries());
  metrics.setItemsOverdueSource(() => store.countOverdueItems(new Date().toISOString()));
  metrics.setShardGroupsUnreachableSource(() => store.shardGroupsUnreachable());

  let address: string | undefined;
  if (config.role === "all" || config.role === "api") {
    const app = await buildApp(config, { store, logger, metrics });
    address = await app.listen({ port: config.port, host: config.host });
    shutdown.onDrain("http", () => app.close());
  }
  if (config.role === "all" || config.role === "worker") {
    const worker = await startWorkerRole(config, {
      store,
      logger,
      botEvents: botMetricsEvents(metrics),
      webhookEvents: webhookMetricsEvents(metrics),
    });
    metrics.setBreakerStateSource(
      () => worker.gate.breakerState(),
      () => worker.gate.breakerReason(),
    );
    metrics.setScheduleIntervalSource(() => worker.cron.scheduleIntervalSeconds());
    // stop() finishes the item in hand or releases the batch lease, and leaves the outbox consistent.
    shutdown.onDrain("worker", () => worker.stop());
    if (config.role === "worker") {
      const probes = await buildProbeApp(config, { store, logger, metrics });
      address = await probes.listen({ port: config.port, host: config.host });
      shutdown.onDrain("http", () => probes.close());
    }
  }
  shutdown.installSignalHandlers();
  // Where people go next: the API reference for integrators, the console for operators.
  const pages = address && config.role !== "worker" ? { docs: `${address}/docs`, console: `${address}/console` } : {};
  logger.info({ role: config.role, store: config.store.kind, address, ...pages }, "work-item-api started");
}

main().catch((error: unknown) => {
  process.stderr.write(`work-item-api: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
