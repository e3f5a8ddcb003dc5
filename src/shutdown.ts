/**
 * Graceful shutdown on SIGTERM/SIGINT, in two phases with one overall deadline
 * (SHUTDOWN_TIMEOUT_MS):
 *
 * 1. drain: everything that does work stops taking new work and finishes what it holds, all at
 *    once. The HTTP server stops accepting connections, answers requests that still arrive on
 *    open connections with 503 and `Connection: close`, and lets in-flight requests finish;
 *    background services (the bot, the webhook dispatcher) finish or release their leases.
 * 2. release: what the drained work used (the store) is closed.
 *
 * Each phase waits at most its share of the deadline. The process exits 0 when everything
 * finished in time, and 1 when something had to be abandoned (it is logged by name).
 */
import type { FastifyBaseLogger } from "fastify";

/** Something to stop; resolves when it has finished. */
export type StopHook = () => Promise<void>;

type Phase = "drain" | "release";

/** Share of the deadline the drain phase may use; the release phase gets the rest. */
const DRAIN_SHARE = 0.8;

export class Shutdown {
  private readonly hooks: Array<{ phase: Phase; name: string; stop: StopHook }> = [];
  private started: Promise<boolean> | undefined;

  constructor(
    private readonly logger: FastifyBaseLogger,
    private readonly timeoutMs: number,
  ) {}

  /** Work to finish first (HTTP server, bot, dispatcher); all drain hooks run at once. */
  onDrain(name: string, stop: StopHook): void {
    this.hooks.push({ phase: "drain", name, stop });
  }

  /** Resources to close once every drain hook has finished or timed out (the store). */
  onRelease(name: string, stop: StopHook): void {
    this.hooks.push({ phase: "release", name, stop });
  }

  /** Runs both phases once; resolves true when every hook finished in time. */
  run(reason: string): Promise<boolean> {
    this.started ??= this.runPhases(reason);
    return this.started;
  }

  /** First SIGTERM/SIGINT shuts down gracefully and exits; a second one exits at once. */
  installSignalHandlers(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.started) {
        this.logger.warn({ signal }, "second signal during shutdown; exiting now");
        exit(1);
        return;
      }
      void this.run(signal).then((clean) => exit(clean ? 0 : 1));
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }

  private async runPhases(reason: string): Promise<boolean> {
    const startedAt = Date.now();
    this.logger.info({ reason, timeoutMs: this.timeoutMs }, "shutting down");
    const drained = await this.runPhase("drain", Math.floor(this.timeoutMs * DRAIN_SHARE));
    const released = await this.runPhase("release", Math.max(500, this.timeoutMs - (Date.now() - startedAt)));
    const clean = drained && released;
    this.logger.info({ reason, clean, ms: Date.now() - startedAt }, "shutdown finished");
    return clean;
  }

  private async runPhase(phase: Phase, budgetMs: number): Promise<boolean> {
    const hooks = this.hooks.filter((hook) => hook.phase === phase);
    const outcomes = await Promise.all(hooks.map((hook) => this.runHook(hook.name, hook.stop, budgetMs)));
    return outcomes.every(Boolean);
  }

  private async runHook(name: string, stop: StopHook, budgetMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), budgetMs);
    });
    try {
      const outcome = await Promise.race([stop().then(() => "done" as const), timedOut]);
      if (outcome === "timeout") {
        this.logger.error({ hook: name, budgetMs }, "shutdown hook did not finish in time; abandoning it");
        return false;
      }
      return true;
    } catch (error) {
      this.logger.error({ hook: name, err: error }, "shutdown hook failed");
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
