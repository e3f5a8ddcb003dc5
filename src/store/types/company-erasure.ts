/**
 * A company that leaves (SPEC §22): its erase, recorded while it runs so that one killed half-way
 * resumes where it was, in phases the store keeps and src/admin/company-erasure.ts drives:
 *
 *   revoking ──(every key revoked)──▶ draining ──(its work stopped, nothing in flight)──▶ deleting ──▶ (gone, audit entry)
 */
import type { OperatorAction } from "./operator-actions.ts";

export type ErasurePhase = "revoking" | "draining" | "deleting";

/** An erase under way. */
export interface CompanyErasure {
  companyId: number;
  phase: ErasurePhase;
  startedAt: string;
  /** When the company's keys were revoked; null while revoking. */
  keysRevokedAt: string | null;
  /** The items the company held once nothing more could be added (counted as deleting begins); null before. */
  items: number | null;
  /** Who asked for it, and why: the audit entry's at the end. */
  operator: { operatorId: string; email: string };
  reason: string;
}

/** What is left to stop of the company's work in a round of draining. */
export interface CompanyWorkLeft {
  /** New items cancelled in this round. */
  cancelled: number;
  /** Items held by a worker's live claim: a call to the authority may be under way. */
  callsInFlight: number;
}

/** An erase that ended: its audit entry. */
export interface CompanyErased {
  companyId: number;
  items: number;
  erasedAt: string;
}

/** A company's erase (SPEC §22). */
export interface CompanyErasureStore {
  /**
   * Records an erase of the company (`begun`), or finds the one under way (`resumed`, as it was
   * asked for then); `notFound` when there is neither the company nor an erase of it.
   */
  beginCompanyErasure(companyId: number, action: OperatorAction): Promise<{ kind: "begun" | "resumed"; erasure: CompanyErasure } | { kind: "notFound" }>;
  companyErasure(companyId: number): Promise<CompanyErasure | undefined>;
  /** Every erase under way, oldest first (the console's, and the worker's to carry on). */
  companyErasures(): Promise<CompanyErasure[]>;
  /** The last erase of this company id that ended (its audit entry), if any. */
  lastCompanyErasure(companyId: number): Promise<CompanyErased | undefined>;
  /** revoking → draining: every key of the company revoked at `now`. */
  revokeCompanyKeys(companyId: number, now: string): Promise<CompanyErasure>;
  /**
   * A round of draining: keys made since revoked too, up to `limit` New items cancelled per batch
   * that can hold one, the company's lanes of the filing queue dropped (the bot takes nothing more
   * of it), and its calls in flight counted.
   */
  stopCompanyWork(companyId: number, input: { now: string; limit: number }): Promise<CompanyWorkLeft>;
  /** draining → deleting: the items counted, and (StoreFlags.reusesIds) the company's ids retired. */
  beginDeletingCompany(companyId: number): Promise<CompanyErasure>;
  /**
   * One bounded step of deleting: up to `limit` rows of the first of the company's tables that
   * still holds any (deliveries with their attempts, events, history, idempotency keys,
   * follow-ups, items, batches, then its lanes, counts and feed position at once); undefined when
   * nothing is left but the company itself and its keys.
   */
  deleteCompanyRows(companyId: number, limit: number): Promise<{ table: string; rows: number } | undefined>;
  /**
   * The end: the company and its keys go, then the erase's record, with its audit entry
   * `company.erased` at `at`. `rowsLeft` when rows of the company came back meanwhile (deleting
   * goes on); `endedElsewhere` when another run ended it first (there is one entry only).
   */
  finishCompanyErasure(companyId: number, at: string): Promise<{ kind: "erased"; erased: CompanyErased } | { kind: "rowsLeft" | "endedElsewhere" }>;
}
