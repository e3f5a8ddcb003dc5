/**
 * A company's erase (SPEC §22), the store's side: the erase's record and its phases, and the
 * bounded steps that stop the company's work and delete its rows, each a short statement or
 * transaction of its own, so intake for other companies never waits on one for long.
 * admin/company-erasure.ts drives the phases; every step can be run again after a crash.
 */
import { AlreadyExistsError } from "../errors.ts";
import type { DatabasePort } from "../port.ts";
import { iso, isoOrNull, type Timestamp } from "../rows.ts";
import type { CompanyErasure, ErasurePhase, Store, StoreFlags } from "../store.ts";
import { retireIds } from "./erasure.ts";
import { ACCOUNTS_SQL } from "./sql-accounts.ts";
import { COMPANY_ERASURE_SQL as SQL } from "./sql-company-erasure.ts";
import { TRANSITION_SQL } from "./sql-transition.ts";

type CompanyErasurePart = Pick<
  Store,
  | "beginCompanyErasure"
  | "companyErasure"
  | "companyErasures"
  | "lastCompanyErasure"
  | "revokeCompanyKeys"
  | "stopCompanyWork"
  | "beginDeletingCompany"
  | "deleteCompanyRows"
  | "finishCompanyErasure"
>;

type Id = number | string;

interface ErasureRow {
  company_id: Id;
  phase: ErasurePhase;
  started_at: Timestamp;
  keys_revoked_at: Timestamp | null;
  items: Id | null;
  operator_id: string;
  operator_email: string;
  reason: string;
}

const toErasure = (row: ErasureRow): CompanyErasure => ({
  companyId: Number(row.company_id),
  phase: row.phase,
  startedAt: iso(row.started_at),
  keysRevokedAt: isoOrNull(row.keys_revoked_at),
  items: row.items === null ? null : Number(row.items),
  operator: { operatorId: row.operator_id, email: row.operator_email },
  reason: row.reason,
});

export function companyErasureStore(db: DatabasePort, flags: StoreFlags): CompanyErasurePart {
  const erasureOf = async (companyId: number) => {
    const row = await db.one<ErasureRow>(SQL.getErasure, [companyId]);
    return row && toErasure(row);
  };
  /** The erase as it is now; it must be under way. */
  const current = async (companyId: number) => {
    const erasure = await erasureOf(companyId);
    if (!erasure) throw new Error(`no erase of company ${companyId} is under way`);
    return erasure;
  };

  return {
    async beginCompanyErasure(companyId, action) {
      const under = await erasureOf(companyId);
      if (under) return { kind: "resumed", erasure: under };
      if (!(await db.one(ACCOUNTS_SQL.getCompany, [companyId]))) return { kind: "notFound" };
      try {
        await db.run(SQL.insertErasure, [companyId, action.at, action.operator.operatorId, action.operator.email, action.reason]);
        return { kind: "begun", erasure: await current(companyId) };
      } catch (error) {
        // Another run began it a moment before.
        if (error instanceof AlreadyExistsError) return { kind: "resumed", erasure: await current(companyId) };
        throw error;
      }
    },

    companyErasure: erasureOf,

    async companyErasures() {
      return (await db.all<ErasureRow>(SQL.listErasures)).map(toErasure);
    },

    async lastCompanyErasure(companyId) {
      const row = await db.one<{ company_id: Id; items: Id | null; at: Timestamp }>(SQL.lastErased, [companyId]);
      return row && { companyId: Number(row.company_id), items: Number(row.items ?? 0), erasedAt: iso(row.at) };
    },

    async revokeCompanyKeys(companyId, now) {
      await db.run(SQL.revokeKeys, [companyId, now]);
      await db.run(SQL.keysRevoked, [companyId, now]);
      return current(companyId);
    },

    async stopCompanyWork(companyId, { now, limit }) {
      await db.run(SQL.revokeKeys, [companyId, now]);
      let cancelled = 0;
      for (const { work_batch_id } of await db.all<{ work_batch_id: Id }>(SQL.unfinishedBatches, [companyId])) {
        cancelled += await db.transaction(async (tx) => {
          const count = await tx.run(SQL.cancelNewItems, [companyId, work_batch_id, now, limit]);
          if (count > 0) await tx.run(TRANSITION_SQL.countItems, [companyId, "Cancelled", count]);
          return count;
        });
      }
      await db.run(SQL.dropFilingLanes, [companyId]);
      await db.run(SQL.dropStatusLanes, [companyId]);
      const inFlight = await db.one<{ calls: Id }>(SQL.callsInFlight, [companyId, now]);
      return { cancelled, callsInFlight: Number(inFlight?.calls ?? 0) };
    },

    async beginDeletingCompany(companyId) {
      await db.transaction(async (tx) => {
        const largest = await tx.one<{ work_items: Id | null; work_batches: Id | null; webhook_outbox: Id | null }>(SQL.largestIds, [companyId]);
        if (largest) await retireIds(tx, flags, largest);
      });
      const counted = await db.one<{ items: Id }>(SQL.countItems, [companyId]);
      await db.run(SQL.deleting, [companyId, Number(counted?.items ?? 0)]);
      return current(companyId);
    },

    async deleteCompanyRows(companyId, limit) {
      for (const [table, step] of SQL.deleteSteps) {
        const rows = await db.run(step, [companyId, limit]);
        if (rows > 0) return { table, rows };
      }
      let rows = 0;
      for (const [, step] of SQL.smallTables) rows += await db.run(step, [companyId]);
      return rows > 0 ? { table: "filing_lanes, status_lanes, company_item_counts, event_sequences", rows } : undefined;
    },

    async finishCompanyErasure(companyId, at) {
      if (await db.one(SQL.anyRowsLeft, [companyId])) return { kind: "rowsLeft" };
      await db.run(SQL.deleteKeys, [companyId]);
      await db.run(SQL.deleteCompany, [companyId]);
      return db.transaction(async (tx) => {
        const ended = await tx.one<ErasureRow>(SQL.endErasure, [companyId]);
        if (!ended) return { kind: "endedElsewhere" as const };
        const items = Number(ended.items ?? 0);
        await tx.run(SQL.insertErasedAudit, [at, ended.operator_id, ended.operator_email, companyId, ended.reason, items]);
        return { kind: "erased" as const, erased: { companyId, items, erasedAt: at } };
      });
    },
  };
}
