/**
 * What the Overview's "Deadlines" chart shows (SPEC §14): each coming deadline's waiting items
 * against what the bot can still file before it at the last hour's rate, and the overdue ones.
 *
 * The bot files earliest deadline first and late items last (§14), so the items of a deadline
 * get what is left of the capacity before it once the earlier deadlines' items are filed; items
 * that cannot make theirs become late and go to the back. A pure function: no clock, no store.
 */
import type { DeadlineOverview } from "../store/store.ts";

const HOUR_MS = 60 * 60 * 1000;

export interface DeadlineOutlook {
  /** Null for the items whose deadline has passed. */
  deadlineAt: string | null;
  unsubmitted: number;
  /** The companies of those items; null for the overdue ones (the overview does not count them). */
  companies: number | null;
  /** What the bot can file before the deadline at the rate: submittedLastHour × hours to go. */
  capacity: number;
  /** Of that, what is left for these items after the earlier deadlines' items; 0 once passed. */
  canFile: number;
  /** Items filed in time at this rate. */
  inTime: number;
  /** Items that miss their deadline at this rate; all the overdue ones have missed it already. */
  beyond: number;
}

/** The overdue items first, then each coming deadline, earliest first. */
export function deadlineOutlook(deadlines: DeadlineOverview, submittedLastHour: number, now: Date): DeadlineOutlook[] {
  const overdue: DeadlineOutlook = {
    deadlineAt: null,
    unsubmitted: deadlines.overdue,
    companies: null,
    capacity: 0,
    canFile: 0,
    inTime: 0,
    beyond: deadlines.overdue,
  };
  let filedBefore = 0;
  const coming = [...deadlines.next]
    .sort((a, b) => Date.parse(a.deadlineAt) - Date.parse(b.deadlineAt))
    .map((deadline): DeadlineOutlook => {
      const hours = Math.max(0, Date.parse(deadline.deadlineAt) - now.getTime()) / HOUR_MS;
      const capacity = Math.floor(submittedLastHour * hours);
      const canFile = Math.max(0, capacity - filedBefore);
      const inTime = Math.min(deadline.unsubmitted, canFile);
      filedBefore += inTime;
      return { ...deadline, capacity, canFile, inTime, beyond: deadline.unsubmitted - inTime };
    });
  return [overdue, ...coming];
}
