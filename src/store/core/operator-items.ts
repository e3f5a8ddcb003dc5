/**
 * The work items operators list across companies (SPEC §25): a page read segment by segment of
 * its order until it is full (core/sql-operator-items.ts), how many items match, and the names
 * of companies.
 */
import type { ItemPosition } from "../../domain/item-order.ts";
import type { DatabasePort } from "../port.ts";
import { toOperatorWorkItemView, type WorkItemRow } from "../rows.ts";
import type { ItemCount, OperatorItemFilters, OperatorItemsQuery, OperatorItemsStore, OperatorWorkItemView } from "../store.ts";
import {
  cappedCountStatement, COUNTED_STATUSES, DEADLINE_SEGMENTS, NAMES_AT_ONCE, namesOfCompanies, OPERATOR_ITEMS_SQL, sampleCountStatement, segmentStatement, statusesOfGroup,
  type Segment, type Stream,
} from "./sql-operator-items.ts";

type Id = number | string;

/** An estimate reads this many ids, in SAMPLE_WINDOWS runs spread over all of them: bounded, whatever the store holds. */
const SAMPLE_IDS = 10_000;
const SAMPLE_WINDOWS = 20;

/** The segments a query reads, in order: an item without a deadline cannot match a filter on it. */
function segmentsOf(query: OperatorItemsQuery): Segment[] {
  if ((query.order ?? "newest") === "newest") return [{ kind: "newest" }];
  const byDeadline = query.deadlineBefore !== undefined || query.deadlineAtOrAfter !== undefined;
  return DEADLINE_SEGMENTS.filter(
    (segment) => (query.status === undefined || statusesOfGroup(segment.finished).includes(query.status)) && (segment.kind === "dated" || !byDeadline),
  );
}

const rank = (segment: Segment) => (segment.kind === "newest" ? 0 : DEADLINE_SEGMENTS.findIndex((s) => s.kind === segment.kind && s.finished === segment.finished));

/** The segment a position lies in. */
const segmentOf = (position: ItemPosition): Segment =>
  position.order === "newest" ? { kind: "newest" } : { kind: position.deadlineAt === null ? "undated" : "dated", finished: position.finished };

/** A part of a segment for each company and status the query names (or none); one when it names neither. */
function streamsOf(query: OperatorItemsQuery, segment: Segment): Stream[] {
  const statuses = query.status !== undefined ? [query.status] : segment.kind === "newest" ? [undefined] : statusesOfGroup(segment.finished);
  const companies = query.companyIds ?? [undefined];
  return companies.flatMap((companyId) => statuses.map((status) => ({ ...(companyId === undefined ? {} : { companyId }), ...(status === undefined ? {} : { status }) })));
}

/** Whether the per-company counters know how many items match: companies and a counted status, nothing else. */
function countedByCounters(filters: OperatorItemFilters): boolean {
  const { companyIds: _companies, status, ...rest } = filters;
  return status !== undefined && COUNTED_STATUSES.includes(status) && Object.values(rest).every((value) => value === undefined);
}

export function operatorItemsStore(db: DatabasePort): OperatorItemsStore {
  async function estimate(filters: OperatorItemFilters, cap: number): Promise<ItemCount> {
    const range = await db.one<{ lowest: Id | null; highest: Id | null }>(OPERATOR_ITEMS_SQL.itemIdRange);
    const lowest = Number(range?.lowest ?? 0);
    const span = Number(range?.highest ?? 0) - lowest + 1;
    const width = Math.ceil(SAMPLE_IDS / SAMPLE_WINDOWS);
    const windows: Array<[number, number]> =
      span <= SAMPLE_IDS
        ? [[lowest, lowest + span - 1]]
        : Array.from({ length: SAMPLE_WINDOWS }, (_, index) => {
            const from = lowest + Math.floor((index * span) / SAMPLE_WINDOWS);
            return [from, from + width - 1];
          });
    const { statement, values } = sampleCountStatement(filters, windows);
    const matched = Number((await db.one<{ items: Id }>(statement, values))?.items ?? 0);
    // A store no larger than the sample was read whole: its count is exact.
    if (span <= SAMPLE_IDS) return { count: matched, exact: true };
    return { count: Math.max(cap + 1, Math.round((matched * span) / (width * SAMPLE_WINDOWS))), exact: false };
  }

  return {
    async listAllWorkItems(query) {
      if (query.companyIds?.length === 0) return [];
      if (query.after !== undefined && query.after.order !== (query.order ?? "newest")) throw new Error("a page starts after a position of its own order");
      const { companyIds: _companies, status: _status, order: _order, after, limit, ...filters } = query;
      const segments = segmentsOf(query);
      const start = after === undefined ? undefined : segmentOf(after);
      const items: OperatorWorkItemView[] = [];
      for (const segment of segments) {
        if (items.length >= limit) break;
        if (start !== undefined && rank(segment) < rank(start)) continue;
        const inside = start !== undefined && rank(segment) === rank(start) && after !== undefined;
        const { statement, values } = segmentStatement({
          filters,
          segment,
          streams: streamsOf(query, segment),
          ...(inside ? { after: { deadlineAt: after.order === "deadline" ? after.deadlineAt : null, workItemId: after.workItemId } } : {}),
          limit: limit - items.length,
        });
        items.push(...(await db.all<WorkItemRow>(statement, values)).map(toOperatorWorkItemView));
      }
      return items;
    },

    async countAllWorkItems(filters, cap) {
      const companies = filters.companyIds;
      if (companies?.length === 0) return { count: 0, exact: true };
      if (countedByCounters(filters)) {
        const rows = companies === undefined
          ? await db.all<{ item_count: Id }>(OPERATOR_ITEMS_SQL.countedStatus, [filters.status])
          : (await Promise.all(companies.map((companyId) => db.all<{ item_count: Id }>(OPERATOR_ITEMS_SQL.countedStatusOfCompany, [companyId, filters.status])))).flat();
        return { count: rows.reduce((sum, row) => sum + Number(row.item_count), 0), exact: true };
      }
      const { statement, values } = cappedCountStatement(filters, cap + 1);
      const counted = Number((await db.one<{ items: Id }>(statement, values))?.items ?? 0);
      return counted <= cap ? { count: counted, exact: true } : estimate(filters, cap);
    },

    async listCompanyNames() {
      return (await db.all<{ company_id: Id; name: string }>(OPERATOR_ITEMS_SQL.companyNames)).map((row) => ({ companyId: Number(row.company_id), name: row.name }));
    },

    async companyNames(companyIds) {
      const names = new Map<number, string>();
      const ids = [...new Set(companyIds)];
      for (let start = 0; start < ids.length; start += NAMES_AT_ONCE) {
        const chunk = ids.slice(start, start + NAMES_AT_ONCE);
        const padded = Array.from({ length: NAMES_AT_ONCE }, (_, index) => chunk[index] ?? chunk[0]);
        for (const row of await db.all<{ company_id: Id; name: string }>(namesOfCompanies, padded)) names.set(Number(row.company_id), row.name);
      }
      return names;
    },
  };
}
