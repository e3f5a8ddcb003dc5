/** A company's items as its export streams them (SPEC §22): each item's view with its timeline. */
import type { OperatorWorkItemView, TimelineEntry } from "./operator-reads.ts";

/** One item of an export: as `GET /api/Operator/WorkItems/{id}` answers it. */
export interface ExportedWorkItem {
  item: OperatorWorkItemView;
  timeline: TimelineEntry[];
}

/** The export's reads (SPEC §22). */
export interface ExportStore {
  /**
   * A keyset page of the company's items in id order: up to `limit` items with an id above
   * `afterWorkItemId`, added at or after `since` when given, each with its timeline. Three
   * statements a page, however many items it holds.
   */
  exportWorkItems(companyId: number, page: { afterWorkItemId: number; since?: string; limit: number }): Promise<ExportedWorkItem[]>;
}
