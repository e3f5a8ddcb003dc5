/**
 * The operators' overview (SPEC §12.2): every company with its counts, and the bot as a whole.
 * One builder for the operator API and the console, so the two never disagree.
 */
import { Cron } from "croner";
import { HTTP_AUTHORITY_NAME } from "../bot/http-authority-adapter.ts";
import type { Config } from "../config.ts";
import type { AuthorityBreaker, BotPassSummary, CompanyOverview, Store } from "../store/store.ts";

export interface Overview {
  companies: CompanyOverview[];
  bot: {
    lastPass: BotPassSummary | null;
    /** When the schedule next starts a pass (every worker runs the same BOT_SCHEDULE). */
    nextPassAt: string | null;
    pausedWorkTypes: string[];
    breaker: AuthorityBreaker["state"];
  };
}

export async function buildOverview(store: Store, config: Pick<Config, "botSchedule">, now: Date = new Date()): Promise<Overview> {
  const [companies, lastPass, pausedWorkTypes, breaker] = await Promise.all([
    store.companyOverview({ now: now.toISOString() }),
    store.lastBotPass(),
    store.pausedWorkTypes(),
    store.getAuthorityBreaker(HTTP_AUTHORITY_NAME),
  ]);
  const next = new Cron(config.botSchedule, { paused: true }).nextRun(now);
  return {
    companies,
    bot: { lastPass: lastPass ?? null, nextPassAt: next ? next.toISOString() : null, pausedWorkTypes, breaker: breaker.state },
  };
}
