/**
 * The worker role (ROLE=all|worker): the bot on its schedule and the webhook dispatcher, with
 * the authority adapter they need, the sweeps of data past its retention (SPEC §13, §22) after
 * each bot pass (and each minute of a pass that goes on), and the company erases under way
 * (SPEC §22). Everything it starts, stop() stops.
 */
import type { Logger } from "pino";
import type { Config } from "./config.ts";
import { startErasureRunner, type ErasureRunner } from "./admin/company-erasure.ts";
import { newWorkerId, openAuthority, type OpenedAuthority } from "./bot/authority.ts";
import { createAuthorityGate, type AuthorityGate } from "./bot/authority-gate.ts";
import { runBotOnce, type BotEvents } from "./bot/run-once.ts";
import { startBotCron, type BotCron } from "./bot/cron.ts";
import { sweepEndedDeliveries } from "./retention/delivery-sweep.ts";
import { sweepExpiredEvents } from "./retention/event-sweep.ts";
import { sweepExpiredIdempotencyKeys } from "./retention/idempotency-sweep.ts";
import { sweepExpiredItems } from "./retention/item-sweep.ts";
import type { Store } from "./store/store.ts";
import { createDispatcher, type Dispatcher, type WebhookEvents } from "./webhooks/dispatcher.ts";

/** Most rows each sweep deletes per bot pass (or lap). */
const SWEEP_ROWS = 1000;
/** Events are small and many: most a pass deletes (in statements of EVENT_SWEEP_CHUNK_ROWS). */
const EVENT_SWEEP_ROWS = 5000;
/** Most items past ITEM_RETENTION_DAYS a pass erases (in transactions of ITEM_SWEEP_CHUNK_ITEMS). */
const ITEM_SWEEP_ROWS = 5000;

/** Housekeeping after each bot pass: what it deletes, and how. */
const sweeps = (config: Config, retentionDays = config.itemRetentionDays): Array<{ what: string; sweep: (store: Store, now: Date) => Promise<number> }> => [
  { what: "expired idempotency keys", sweep: (store, now) => sweepExpiredIdempotencyKeys(store, { now, maxRows: SWEEP_ROWS }) },
  { what: "expired events", sweep: (store, now) => sweepExpiredEvents(store, { now, retentionDays: config.eventRetentionDays, maxRows: EVENT_SWEEP_ROWS }) },
  { what: "webhook deliveries past their retention", sweep: (store, now) => sweepEndedDeliveries(store, { now, maxRows: SWEEP_ROWS }) },
  ...(retentionDays === undefined
    ? []
    : [{ what: "work items past their retention", sweep: (store: Store, now: Date) => sweepExpiredItems(store, { now, retentionDays, maxRows: ITEM_SWEEP_ROWS }) }]),
];

export interface WorkerRole {
  workerId: string;
  authority: OpenedAuthority;
  /** Capacity and the shared circuit breaker in front of the authority. */
  gate: AuthorityGate;
  cron: BotCron;
  dispatcher: Dispatcher;
  /** Carries on the company erases under way (SPEC §22). */
  erasures: ErasureRunner;
  stop(): Promise<void>;
}

export interface WorkerRoleDeps {
  store: Store;
  logger: Logger;
  /** Hooks for metrics. */
  botEvents?: BotEvents;
  webhookEvents?: WebhookEvents;
}

export async function startWorkerRole(config: Config, deps: WorkerRoleDeps): Promise<WorkerRole> {
  const workerId = newWorkerId();
  const logger = deps.logger.child({ workerId });
  const authority = await openAuthority(config);
  const gate = createAuthorityGate({ store: deps.store, adapter: authority.adapter, config, owner: workerId });
  if (authority.sim) logger.info({ url: authority.sim.url }, "AUTHORITY_URL is unset: using the built-in authority simulator");
  const dispatcher = createDispatcher({ store: deps.store, config, owner: workerId, logger, ...(deps.webhookEvents ? { events: deps.webhookEvents } : {}) });
  const botEvents: BotEvents = {
    ...deps.botEvents,
    itemFinished(info) {
      deps.botEvents?.itemFinished?.(info);
      // An item that moved on may have a webhook waiting in the outbox: send it now, not at the next poll.
      if (info.result !== "retried") dispatcher.wake();
    },
  };
  const cron = startBotCron({
    schedule: config.botSchedule,
    logger,
    run: (signal) =>
      runBotOnce({
        store: deps.store,
        gate,
        config,
        owner: workerId,
        logger,
        events: botEvents,
        signal,
        nextPassAt: () => cron.nextRunAt(),
        // Housekeeping rides on the bot's passes (and a long pass's laps): bounded, and a failure never fails the pass.
        afterLap: async () => {
          for (const { what, sweep } of sweeps(config)) {
            await sweep(deps.store, new Date()).then(
              (deleted) => deleted > 0 && logger.info({ deleted }, `${what} deleted`),
              (error: unknown) => logger.warn({ err: error }, `sweep of ${what} failed; the next pass tries again`),
            );
          }
        },
      }),
  });
  dispatcher.start();
  const erasures = startErasureRunner({ store: deps.store, logger });
  logger.info({ schedule: config.botSchedule, nextRunAt: cron.nextRunAt()?.toISOString() }, "bot and webhook dispatcher started");
  return {
    workerId,
    authority,
    gate,
    cron,
    dispatcher,
    erasures,
    async stop() {
      await erasures.stop();
      await cron.stop();
      await dispatcher.stop();
      await authority.close();
    },
  };
}
