/**
 * The two orders operators list work items in (SPEC §12.2, §16, §25), as pure rules: the store's
 * SQL implements them (store/core/sql-operator-items.ts) and a property test holds it to these.
 *
 * Glossary
 * - newest: by id, the newest first.
 * - deadline: what still needs the bot first. Unfinished items (New, InProgress, Submitted) come
 *   before finished ones; within each, the items with a deadline, the earliest first, then those
 *   without one; ties by id, the oldest first.
 * - position: where an item stands in an order; a page goes on after the last item's position.
 */
import type { WorkItemStatus } from "./views.ts";

export const ITEM_ORDERS = ["newest", "deadline"] as const;
export type ItemOrder = (typeof ITEM_ORDERS)[number];

/** Statuses the bot still has work for: filing, or asking about. */
export const UNFINISHED_STATUSES = ["New", "InProgress", "Submitted"] as const satisfies readonly WorkItemStatus[];
export const FINISHED_STATUSES = ["Successful", "Failed", "Cancelled", "Withdrawn"] as const satisfies readonly WorkItemStatus[];

export const isFinished = (status: WorkItemStatus): boolean => (FINISHED_STATUSES as readonly WorkItemStatus[]).includes(status);

export type ItemPosition =
  | { order: "newest"; workItemId: number }
  | { order: "deadline"; finished: boolean; deadlineAt: string | null; workItemId: number };

type Positioned = { workItemId: number; status: WorkItemStatus; deadlineAt: string | null };

export function positionOf(item: Positioned, order: ItemOrder): ItemPosition {
  if (order === "newest") return { order, workItemId: item.workItemId };
  return { order, finished: isFinished(item.status), deadlineAt: item.deadlineAt, workItemId: item.workItemId };
}

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Negative when `a` comes first; both positions must be of the same order. */
export function comparePositions(a: ItemPosition, b: ItemPosition): number {
  if (a.order === "newest" || b.order === "newest") return sign(b.workItemId - a.workItemId);
  if (a.finished !== b.finished) return a.finished ? 1 : -1;
  if ((a.deadlineAt === null) !== (b.deadlineAt === null)) return a.deadlineAt === null ? 1 : -1;
  if (a.deadlineAt !== null && b.deadlineAt !== null && a.deadlineAt !== b.deadlineAt) return sign(Date.parse(a.deadlineAt) - Date.parse(b.deadlineAt));
  return sign(a.workItemId - b.workItemId);
}
