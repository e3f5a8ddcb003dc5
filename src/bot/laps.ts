/**
 * The pass and its laps (SPEC §10, §12.2): taking up the companies' batches, flagging deadlines at
 * risk beside the filing, and, for a pass that goes on under load, refreshing it as a new pass
 * would begin and reporting each lap to the operators' overview.
 */
import { forEachConcurrently } from "../lib/concurrency.ts";
import type { BotCounts, BotDeps, Pass } from "./pass-state.ts";

/** How long before its deadline an item not yet filed is announced as at risk (SPEC §10). */
export const DEADLINE_RISK_MS = 2 * 3600_000;
/** How often a pass that goes on reports itself and flags deadlines again: as often as the default schedule starts one. */
const LAP_MS = 60_000;

/**
 * Company by company (every statement names its company; docs/scaling.md), several at once:
 * the companies' new batches into the queue. Returns every company with unfinished batches,
 * whose deadlines are watched.
 */
export async function takeUpBatches(deps: BotDeps): Promise<number[]> {
  const clock = deps.clock ?? (() => new Date());
  const companies = await deps.store.companiesWithBotWork();
  await eachCompany(deps, companies.filter((company) => company.toQueue).map((company) => company.companyId), (companyId) => deps.store.queueBatches(companyId, clock().toISOString()));
  return companies.map((company) => company.companyId);
}

/**
 * Items not filed two hours after `from` announced at risk (paused work types' too), beside the
 * filing: `pass.flagging` is under way until every company was looked at.
 */
export function flagDeadlines(pass: Pass, companies: number[], from: Date): void {
  const { deps, clock } = pass;
  const riskBefore = new Date(from.getTime() + DEADLINE_RISK_MS).toISOString();
  const flagging: Promise<void> = Promise.all([
    pass.flagging,
    eachCompany(deps, companies, (companyId) => deps.store.flagDeadlinesAtRisk(companyId, { riskBefore, now: clock().toISOString() })),
  ])
    .then(() => undefined)
    .catch((error: unknown) => {
      pass.stop ??= { kind: "failure", error };
    })
    .finally(() => {
      if (pass.flagging === flagging) pass.flagging = undefined;
    });
  pass.flagging = flagging;
}

/** The operators' overview shows the last pass (or lap of a long one) of any worker (SPEC §12.2). */
export async function recordLap(pass: Pass): Promise<void> {
  const { startedAt, counts: before } = pass.lap;
  const now = pass.clock();
  const since = (key: keyof BotCounts) => pass.counts[key] - before[key];
  await pass.deps.store.recordBotPass({
    startedAt: startedAt.toISOString(),
    finishedAt: now.toISOString(),
    submitted: since("submitted"),
    succeeded: since("succeeded"),
    failed: since("failed"),
    retried: since("retried"),
  });
  pass.lap = { startedAt: now, counts: { ...pass.counts } };
  pass.deps.events?.lapRecorded?.({ finishedAt: now.toISOString() });
  const { afterLap } = pass.deps;
  if (afterLap) pass.housekeeping = (pass.housekeeping ?? Promise.resolve()).then(afterLap);
}

/** BOT_CONCURRENCY companies at once; the first failure stops starting more, and is thrown once the rest are done. */
async function eachCompany(deps: BotDeps, companies: number[], work: (companyId: number) => Promise<unknown>): Promise<void> {
  const failure: { error?: unknown } = {};
  await forEachConcurrently(companies, deps.config.botConcurrency, async (companyId) => {
    if (deps.signal?.aborted || "error" in failure) return;
    try {
      await work(companyId);
    } catch (error) {
      if (!("error" in failure)) failure.error = error;
    }
  });
  if ("error" in failure) throw failure.error;
}

/**
 * The pass goes on as a new one would begin: new batches join the queue, and are due from then.
 * Once a lap (LAP_MS) it also reports itself and flags deadlines; not at every refresh: looking
 * at every company's items each second would hold the store up, and two hours' notice does not
 * need it.
 */
export async function refresh(pass: Pass): Promise<void> {
  const watched = await takeUpBatches(pass.deps);
  const now = pass.clock();
  pass.dueBefore = now.toISOString();
  const next = pass.deps.nextPassAt?.()?.getTime() ?? Number.POSITIVE_INFINITY;
  // A schedule that names no later time (or a past one) is asked again in a second.
  pass.refreshAt = next > now.getTime() ? next : now.getTime() + 1000;
  if (now.getTime() - pass.lap.startedAt.getTime() < LAP_MS) return;
  await recordLap(pass);
  flagDeadlines(pass, watched, now);
}
