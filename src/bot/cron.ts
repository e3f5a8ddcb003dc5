/**
 * Runs the bot on BOT_SCHEDULE (croner). Runs never overlap within a process, and a run that
 * throws is logged and reported; the schedule keeps going.
 */
import { Cron } from "croner";
import type { BotCounts } from "./run-once.ts";

export interface BotCron {
  /** When the next run starts, if scheduled. */
  nextRunAt(): Date | null;
  /**
   * Seconds from the schedule's last run time before `now` to its next one: how long the bot may
   * rightly go without a pass just now (0 once stopped).
   */
  scheduleIntervalSeconds(now?: Date): number;
  /** Stops scheduling, asks the run in flight to wind down, and waits for it. */
  stop(): Promise<void>;
}

export interface BotCronDeps {
  schedule: string;
  /** One run; `signal` aborts when the cron stops. */
  run: (signal: AbortSignal) => Promise<BotCounts>;
  logger?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export function startBotCron(deps: BotCronDeps): BotCron {
  let inFlight: Promise<void> | undefined;
  const stopping = new AbortController();
  const job: Cron = new Cron(deps.schedule, { protect: true }, (): Promise<void> => {
    inFlight = deps
      .run(stopping.signal)
      .then(
        (counts) => {
          if (counts.batches > 0) deps.logger?.info({ ...counts }, "bot run done");
        },
        (error: unknown) => {
          deps.logger?.error({ err: error, nextRunAt: job.nextRun()?.toISOString() }, "bot run failed; the schedule continues");
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  });
  return {
    nextRunAt: () => job.nextRun(),
    scheduleIntervalSeconds(now = new Date()) {
      const next = job.nextRun(now);
      const previous = job.previousRuns(1, now)[0];
      return next && previous ? (next.getTime() - previous.getTime()) / 1000 : 0;
    },
    async stop() {
      job.stop();
      stopping.abort();
      await inFlight;
    },
  };
}
