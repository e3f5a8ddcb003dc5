/**
 * The background half of the service: what runs in ROLE=worker and ROLE=all processes, never in
 * ROLE=api ones. The bot scheduler and the webhook outbox dispatcher start here; each returns a
 * stopper that lets in-flight work finish, so a SIGTERM drains rather than cuts.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.ts";
import type { Store } from "./store/store.ts";

export interface WorkerDeps {
  config: Config;
  store: Store;
  logger: FastifyBaseLogger;
}

/** Stops one service; resolves when its in-flight work has finished. */
export type Stopper = () => Promise<void>;

/**
 * Starts every worker service and returns their stoppers. The bot scheduler and the webhook
 * dispatcher are added here when they land; until then a worker process only holds its place.
 */
export async function startWorkerServices(deps: WorkerDeps): Promise<Stopper[]> {
  deps.logger.debug({ role: deps.config.role }, "worker services: none registered yet");
  return [];
}
