/**
 * How near an item's deadline is (SPEC §16, §25): the one definition behind the console's marks
 * and its "Overdue" and "Due today" filters, and the operator API's `due`, `overdue` and
 * `deadline`, so that the two can never list different items.
 *
 * Glossary
 * - overdue: a New item (not filed yet) whose deadline has passed. A filed item met its deadline
 *   or missed it already; one being filed (InProgress) is at the authority this very moment.
 * - due day: the day "Due today" looks at, in the console's time zone (CONSOLE_TZ): today on a
 *   working day; on a weekend or public holiday (DEADLINE_HOLIDAYS), the next working day.
 *   Deadlines fall on working days only, so a day off would otherwise never hold items of its own.
 * - due today: a New item, not overdue, whose deadline comes before the end of the due day.
 * - at risk: a New item due within two hours: the bot may not file it in time.
 */
import { isWorkingDayAt, startOfDayIn } from "./deadline.ts";
import type { WorkItemStatus } from "./views.ts";

export const DUE_FILTERS = ["overdue", "today"] as const;
export type DueFilter = (typeof DUE_FILTERS)[number];

/** The marks, the most urgent first: an item carries the first that applies, or none. */
export const DEADLINE_MARKS = ["overdue", "atRisk", "dueToday"] as const;
export type DeadlineMark = (typeof DEADLINE_MARKS)[number];

/** Where "today" is reckoned: the console's time zone and the holiday calendar of the deadlines. */
export interface DueCalendar {
  timeZone: string;
  /** A country (optionally -region) whose public holidays are not working days, as DEADLINE_HOLIDAYS. */
  holidays: string;
}

/** How close a deadline may come before a New item is at risk. */
export const AT_RISK_MS = 2 * 60 * 60 * 1000;
/** Always inside the next calendar day from the start of this one, whether a day has 23, 24 or 25 hours. */
const INTO_NEXT_DAY_MS = 30 * 60 * 60 * 1000;
/** A year of days off (public holidays and weekends never run that long); a bad calendar cannot loop. */
const MAX_DAYS_OFF = 366;

type Deadlined = { status: WorkItemStatus; deadlineAt: string | null };

/** The instant the day after `now`'s begins in `timeZone`: the end of "today". */
export function endOfDayIn(now: Date, timeZone: string): Date {
  return startOfDayIn(new Date(startOfDayIn(now, timeZone).getTime() + INTO_NEXT_DAY_MS), timeZone);
}

/** The due day at `now`: its start and end, and whether it is today (false: today is a day off, and this is the next working day). */
export function dueDay(now: Date, calendar: DueCalendar): { start: Date; end: Date; today: boolean } {
  let start = startOfDayIn(now, calendar.timeZone);
  for (let skipped = 0; skipped < MAX_DAYS_OFF && !isWorkingDayAt(start, calendar.timeZone, calendar.holidays); skipped++) {
    start = endOfDayIn(start, calendar.timeZone);
  }
  return { start, end: endOfDayIn(start, calendar.timeZone), today: start.getTime() <= now.getTime() };
}

/**
 * The deadlines a `due` filter takes, as a half-open range of instants: every one of them also
 * needs status New. `overdue`: before now; `today`: from now to the end of the due day.
 */
export function dueWindow(due: DueFilter, now: Date, calendar: DueCalendar): { deadlineAtOrAfter?: string; deadlineBefore: string } {
  if (due === "overdue") return { deadlineBefore: now.toISOString() };
  return { deadlineAtOrAfter: now.toISOString(), deadlineBefore: dueDay(now, calendar).end.toISOString() };
}

export const isOverdue = (item: Deadlined, now: Date): boolean =>
  item.status === "New" && item.deadlineAt !== null && Date.parse(item.deadlineAt) < now.getTime();

/** The marks at `now`, as a function of the item, the due day reckoned once: only New items carry one, at the same instants as dueWindow's. */
export function deadlineMarker(now: Date, calendar: DueCalendar): (item: Deadlined) => DeadlineMark | null {
  const dueEnd = dueDay(now, calendar).end.getTime();
  return (item) => {
    if (item.status !== "New" || item.deadlineAt === null) return null;
    const deadline = Date.parse(item.deadlineAt);
    if (deadline < now.getTime()) return "overdue";
    if (deadline < now.getTime() + AT_RISK_MS) return "atRisk";
    return deadline < dueEnd ? "dueToday" : null;
  };
}

export const deadlineMark = (item: Deadlined, now: Date, calendar: DueCalendar): DeadlineMark | null => deadlineMarker(now, calendar)(item);
