/**
 * One bot pass (SPEC §5, §10, §14), the bot's front door. First, company by company
 * (BOT_CONCURRENCY at once), it takes up the batches (their New items join the filing queue) and
 * flags items whose deadline is near (src/bot/laps.ts). Then two loops share the authority's
 * capacity until the work due at the start is done:
 * - filing (src/bot/filing-loop.ts): creates are submitted; changes and withdrawals are filed
 *   against their original (src/bot/follow-up-filing.ts);
 * - status (src/bot/status-loop.ts): filed items are asked about until the authority decides.
 * Both keep a hand of claimed items (src/bot/hand.ts), and record what each call made of an item
 * (src/bot/outcomes.ts). Calls go through the AuthorityGate (the shared capacity and circuit
 * breaker); a call the breaker keeps back spends nothing, and its item is given back at once.
 * On a schedule, a pass still busy when the next would begin refreshes itself and goes on.
 */
import { Wakeup } from "../lib/concurrency.ts";
import { fileDueItems } from "./filing-loop.ts";
import { flagDeadlines, recordLap, refresh, takeUpBatches } from "./laps.ts";
import { going, type BotCounts, type BotDeps, type Pass } from "./pass-state.ts";
import { askAboutFiledItems } from "./status-loop.ts";
import { inSpan, type Span } from "../telemetry/spans.ts";

export type { BotConfig, BotCounts, BotDeps, BotEvents } from "./pass-state.ts";
export { DEADLINE_RISK_MS } from "./laps.ts";

/** One pass, as one span (SPEC §17); each authority call in it is a span of its item's trace, linked to it. */
export function runBotOnce(deps: BotDeps): Promise<BotCounts> {
  return inSpan("bot pass", {}, async (span) => {
    const counts = await runPass(deps, span);
    span.setAttributes(Object.fromEntries(Object.entries(counts).map(([name, count]) => [`work_item_api.bot.${name}`, count])));
    return counts;
  });
}

async function runPass(deps: BotDeps, span: Span): Promise<BotCounts> {
  const clock = deps.clock ?? (() => new Date());
  const started = clock();
  const counts: BotCounts = { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 };
  try {
    const watched = await takeUpBatches(deps);
    const pass: Pass = {
      deps,
      clock,
      span,
      dueBefore: clock().toISOString(),
      refreshAt: deps.nextPassAt?.()?.getTime() ?? Number.POSITIVE_INFINITY,
      lap: { startedAt: started, counts: { ...counts } },
      counts,
      batches: new Set(),
      filed: new Wakeup(),
      filedCount: 0,
      filingDone: false,
      askingIdle: false,
      askingDone: new Wakeup(),
    };
    // Deadlines are watched beside the filing: the slots need not wait for every company's look.
    flagDeadlines(pass, watched, started);
    await fileAndAsk(pass);
    // A refresh or a flagging begun before the pass stopped early is not left running.
    await pass.refreshing;
    await pass.flagging;
    if (pass.stop?.kind === "failure") throw pass.stop.error;
    await recordLap(pass);
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime() });
    await pass.housekeeping;
    return counts;
  } catch (error) {
    deps.events?.runFinished?.({ counts: { ...counts }, durationMs: clock().getTime() - started.getTime(), error });
    throw error;
  }
}

/**
 * Both loops, until they run out of work before the schedule's next pass time. Work that ends
 * after that time takes up what arrived meanwhile and goes on: the schedule skips the pass it
 * overran, so ending would leave that work for the pass after (in the deadline bench, a pass
 * that ended just after a second began left a surge's first items a whole second unclaimed).
 */
async function fileAndAsk(pass: Pass): Promise<void> {
  for (;;) {
    pass.filingDone = false;
    pass.askingIdle = false;
    await Promise.all([
      fileDueItems(pass).finally(() => {
        pass.filingDone = true;
        pass.filed.wake();
      }),
      askAboutFiledItems(pass),
    ]);
    if (!going(pass) || pass.clock().getTime() < pass.refreshAt) return;
    try {
      await refresh(pass);
    } catch (error) {
      pass.stop ??= { kind: "failure", error };
      return;
    }
  }
}
