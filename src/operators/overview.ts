/**
 * The operators' overview (SPEC §12.2, §14): every company with its counts, the queue by
 * deadline, and the bot as a whole. One builder for the operator API and the console, so the
 * two never disagree.
 */
import { Cron } from "croner";
import { HTTP_AUTHORITY_NAME } from "../bot/http-authority-adapter.ts";
import type { Config } from "../config.ts";
import type { AuthorityBreaker, BotPassSummary, CompanyOverview, DeadlineOverview, Store } from "../store/store.ts";

/** How many coming deadlines the overview lists (SPEC §14). */
export const NEXT_DEADLINES = 5;
const HOUR_MS = 60 * 60 * 1000;

export interface Overview {
  companies: CompanyOverview[];
  deadlines: DeadlineOverview;
  bot: {
    /** Items filed with the authority in the hour before now: the bot's recent rate. */
    submittedLastHour: number;
    lastPass: BotPassSummary | null;
    /** When the schedule next starts a pass (every worker runs the same BOT_SCHEDULE). */
    nextPassAt: string | null;
    pausedWorkTypes: string[];
    breaker: AuthorityBreaker["state"];
    /** Why filing stopped, when the authority refused our calls themselves; null otherwise. */
    breakerReason: string | null;
  };
}

export async function buildOverview(store: Store, config: Pick<Config, "botSchedule">, now: Date = new Date()): Promise<Overview> {
  const [companies, deadlines, submittedLastHour, lastPass, pausedWorkTypes, breaker] = await Promise.all([
    store.companyOverview({ now: now.toISOString() }),
    store.deadlineOverview({ now: now.toISOString(), limit: NEXT_DEADLINES }),
    store.countSubmittedSince(new Date(now.getTime() - HOUR_MS).toISOString()),
    store.lastBotPass(),
    store.pausedWorkTypes(),
    store.getAuthorityBreaker(HTTP_AUTHORITY_NAME),
  ]);
  const next = new Cron(config.botSchedule, { paused: true }).nextRun(now);
  return {
    companies,
    deadlines,
    bot: { submittedLastHour, lastPass: lastPass ?? null, nextPassAt: next ? next.toISOString() : null, pausedWorkTypes, breaker: breaker.state, breakerReason: breaker.reason },
  };
}
