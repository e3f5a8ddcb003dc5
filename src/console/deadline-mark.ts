/**
 * "Overdue" and "At risk" (SPEC §16): a New item whose deadline has passed, or is less than two
 * hours away. The mark is a word in a badge, so it does not rest on colour alone.
 */
import type { WorkItemView } from "../domain/views.ts";
import { html, type Html } from "./html.ts";

/** How close a deadline may come before a New item is at risk. */
export const AT_RISK_MS = 2 * 60 * 60 * 1000;

export type DeadlineMark = "Overdue" | "At risk";

/** The mark of an item at `now`, or undefined: only New items carry one; a filed item has met its deadline or missed it already. */
export function deadlineMark(item: Pick<WorkItemView, "status" | "deadlineAt">, now: Date): DeadlineMark | undefined {
  if (item.status !== "New" || item.deadlineAt === null) return undefined;
  const left = Date.parse(item.deadlineAt) - now.getTime();
  if (left < 0) return "Overdue";
  return left < AT_RISK_MS ? "At risk" : undefined;
}

export function deadlineBadge(item: Pick<WorkItemView, "status" | "deadlineAt">, now: Date): Html {
  const mark = deadlineMark(item, now);
  return mark ? html` <span class="badge mark-${mark === "Overdue" ? "overdue" : "at-risk"}">${mark}</span>` : html``;
}
