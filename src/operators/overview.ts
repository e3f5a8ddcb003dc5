/**
 * The operators' overview (SPEC §12.2, §14): every company with its counts, the queue by
 * deadline, and the bot as a whole. One builder for the operator API and the console, so the
 * two never disagree.
 */
import { Cron } from "croner";
import { HTTP_AUTHORITY_NAME } from "../bot/http-authority-adapter.ts";
import type { Config } from "../config.ts";
import { startOfDayIn } from "../domain/deadline.ts";
import type { Activity, AuthorityBreaker, BotPassSummary, CompanyOverview, DeadlineOverview, HourlyActivity, Store } from "../store/store.ts";

/** How many coming deadlines the overview lists (SPEC §14). */
export const NEXT_DEADLINES = 5;
/** The hours of the throughput (SPEC §16): this one and the 23 before it. */
export const THROUGHPUT_HOURS = 24;
const HOUR_MS = 60 * 60 * 1000;

export interface Overview {
  companies: CompanyOverview[];
  deadlines: DeadlineOverview;
  /** Per hour, oldest first, ending with the hour now is in: what was filed, decided and given up. */
  throughput: HourlyActivity[];
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
  /**
   * Shard groups of a Citus store whose worker node did not answer these reads (SPEC §23): their
   * companies are missing from the lists and the counts. 0 on one PostgreSQL or SQLite.
   */
  shardGroupsUnreachable: number;
}

export async function buildOverview(store: Store, config: Pick<Config, "botSchedule">, now: Date = new Date()): Promise<Overview> {
  const firstHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (THROUGHPUT_HOURS - 1) * HOUR_MS;
  const [companies, deadlines, hourly, submittedLastHour, lastPass, pausedWorkTypes, breaker] = await Promise.all([
    store.companyOverview({ now: now.toISOString() }),
    store.deadlineOverview({ now: now.toISOString(), limit: NEXT_DEADLINES }),
    store.hourlyActivity(new Date(firstHour).toISOString()),
    store.countSubmittedSince(new Date(now.getTime() - HOUR_MS).toISOString()),
    store.lastBotPass(),
    store.pausedWorkTypes(),
    store.getAuthorityBreaker(HTTP_AUTHORITY_NAME),
  ]);
  const next = new Cron(config.botSchedule, { paused: true }).nextRun(now);
  return {
    companies,
    deadlines,
    throughput: everyHour(hourly, firstHour),
    bot: { submittedLastHour, lastPass: lastPass ?? null, nextPassAt: next ? next.toISOString() : null, pausedWorkTypes, breaker: breaker.state, breakerReason: breaker.reason },
    shardGroupsUnreachable: store.shardGroupsUnreachable(),
  };
}

/** The hours with activity, and a zero entry for each hour without. */
function everyHour(hourly: HourlyActivity[], firstHour: number): HourlyActivity[] {
  const byHour = new Map(hourly.map((entry) => [entry.hour, entry]));
  return Array.from({ length: THROUGHPUT_HOURS }, (_, index) => {
    const hour = new Date(firstHour + index * HOUR_MS).toISOString();
    return byHour.get(hour) ?? { hour, submitted: 0, succeeded: 0, failed: 0, deliveriesFailed: 0, deliveryAttemptsFailed: 0 };
  });
}

/** The bot's last 60 minutes and its day so far in `timeZone`, for the console's bot section (SPEC §16). */
export async function recentActivity(store: Store, timeZone: string, now: Date = new Date()): Promise<{ lastHour: Activity; today: Activity; dayStartedAt: string }> {
  const dayStartedAt = startOfDayIn(now, timeZone).toISOString();
  const [lastHour, today] = await Promise.all([store.activitySince(new Date(now.getTime() - HOUR_MS).toISOString()), store.activitySince(dayStartedAt)]);
  return { lastHour, today, dayStartedAt };
}
