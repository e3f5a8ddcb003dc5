/**
 * "Overdue", "At risk" and "Due today" (SPEC §16): a New item whose deadline has passed, is less
 * than two hours away, or falls later today in the console's time zone (CONSOLE_TZ). The mark is
 * a word in a badge, so it does not rest on colour alone.
 */
import { startOfDayIn } from "../domain/deadline.ts";
import type { WorkItemView } from "../domain/views.ts";
import { html, type Html } from "./html.ts";

/** How close a deadline may come before a New item is at risk. */
export const AT_RISK_MS = 2 * 60 * 60 * 1000;
/** Always inside the next calendar day from the start of this one, whether a day has 23, 24 or 25 hours. */
const INTO_NEXT_DAY_MS = 30 * 60 * 60 * 1000;

export type DeadlineMark = "Overdue" | "At risk" | "Due today";

const MARK_CLASSES: Record<DeadlineMark, string> = { Overdue: "mark-overdue", "At risk": "mark-at-risk", "Due today": "mark-due-today" };

/** The instant the day after `now`'s begins in `timeZone`: the end of "today". */
export function endOfDayIn(now: Date, timeZone: string): Date {
  return startOfDayIn(new Date(startOfDayIn(now, timeZone).getTime() + INTO_NEXT_DAY_MS), timeZone);
}

/** The mark of an item at `now`, or undefined: only New items carry one; a filed item has met its deadline or missed it already. */
export function deadlineMark(item: Pick<WorkItemView, "status" | "deadlineAt">, now: Date, timeZone: string): DeadlineMark | undefined {
  if (item.status !== "New" || item.deadlineAt === null) return undefined;
  const deadline = Date.parse(item.deadlineAt);
  const left = deadline - now.getTime();
  if (left < 0) return "Overdue";
  if (left < AT_RISK_MS) return "At risk";
  return deadline < endOfDayIn(now, timeZone).getTime() ? "Due today" : undefined;
}

export function deadlineBadge(item: Pick<WorkItemView, "status" | "deadlineAt">, now: Date, timeZone: string): Html {
  const mark = deadlineMark(item, now, timeZone);
  return mark ? html` <span class="badge ${MARK_CLASSES[mark]}">${mark}</span>` : html``;
}
