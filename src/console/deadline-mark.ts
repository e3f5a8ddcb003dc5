/**
 * The deadline marks as the console shows them (SPEC §16): "Overdue", "At risk" and "Due today",
 * as defined once in domain/due.ts. The mark is a word in a badge, so it does not rest on colour alone.
 */
import type { DeadlineMark } from "../domain/due.ts";
import { html, type Html } from "./html.ts";

export const MARK_LABELS: Record<DeadlineMark, string> = { overdue: "Overdue", atRisk: "At risk", dueToday: "Due today" };
const MARK_CLASSES: Record<DeadlineMark, string> = { overdue: "mark-overdue", atRisk: "mark-at-risk", dueToday: "mark-due-today" };

export function deadlineBadge(mark: DeadlineMark | null): Html {
  return mark ? html` <span class="badge ${MARK_CLASSES[mark]}">${MARK_LABELS[mark]}</span>` : html``;
}
