/**
 * The work items operators list across companies (SPEC §12.2, §16, §25): a page in either order
 * from a keyset position, how many items match, and the companies' names. Operators see every
 * company, so these are not tenant reads; the statements say so in core/sql-operator-items.ts.
 */
import type { ItemOrder, ItemPosition } from "../../domain/item-order.ts";
import type { WorkItemKind, WorkItemStatus } from "../../domain/views.ts";
import type { OperatorWorkItemView } from "./operator-reads.ts";

export type { ItemOrder, ItemPosition } from "../../domain/item-order.ts";

/** The filters of the list; every one given must hold. */
export interface OperatorItemFilters {
  /** Only items of these companies: one, or the few a name matched; an empty list matches nothing. */
  companyIds?: readonly number[];
  status?: WorkItemStatus;
  kind?: WorkItemKind;
  customerReference?: string;
  applicationNumber?: string;
  registrationNumber?: string;
  workBatchId?: number;
  /** Only items with a deadline before this instant. */
  deadlineBefore?: string;
  /** Only items with a deadline at or after this instant. */
  deadlineAtOrAfter?: string;
}

export interface OperatorItemsQuery extends OperatorItemFilters {
  /** `newest` when left out; the orders are defined in domain/item-order.ts. */
  order?: ItemOrder;
  /** A page starts right after this position, which must be of the same order. */
  after?: ItemPosition;
  limit: number;
}

/** How many items match: counted exactly, or estimated where a count would read more than a bounded number of rows. */
export interface ItemCount {
  count: number;
  exact: boolean;
}

export interface CompanyName {
  companyId: number;
  name: string;
}

/** What operators list across companies (SPEC §25). */
export interface OperatorItemsStore {
  /** One page in the query's order, read through indexes that hold that order. */
  listAllWorkItems(query: OperatorItemsQuery): Promise<OperatorWorkItemView[]>;
  /**
   * How many items match the filters: exact when at most `cap` do, or when the per-company
   * counters answer (companies and a status other than New or InProgress, alone); otherwise an
   * estimate above `cap`, from a sample of the ids.
   */
  countAllWorkItems(filters: OperatorItemFilters, cap: number): Promise<ItemCount>;
  /** Every company by id: the registry a name is matched against (hundreds or thousands of rows, as the Overview reads). */
  listCompanyNames(): Promise<CompanyName[]>;
  /** The names of these companies; an unknown id is left out. */
  companyNames(companyIds: readonly number[]): Promise<Map<number, string>>;
}
