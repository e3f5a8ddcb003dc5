/**
 * A company that leaves (SPEC §22): its erase, in this order. Its keys and tokens stop working
 * (revoked, so every process refuses them within KEYS_REFUSED_WITHIN_MS); its New items are
 * cancelled and it leaves the filing queue, and its calls in flight to the authority end; then
 * every row of the company goes in bounded steps, each followed by a bounded hand-back of the
 * pages it freed and a pause for intake (retention/after-erasing-step.ts), and one audit entry
 * `company.erased` says so.
 *
 * The store records the erase and its phase (store/types/company-erasure.ts), so every step may
 * be run again: an erase killed half-way resumes on the next run (the CLI's, or the worker's,
 * which carries on every erase under way, worker-role.ts) and ends in the same state. Two runs at
 * once do no harm: each step deletes what is there, and only one writes the audit entry.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterErasingStep } from "../retention/after-erasing-step.ts";
import type { CompanyErased, OperatorAction, Store } from "../store/store.ts";

/**
 * Every process refuses a revoked key within this (SPEC §22; auth/key-status.ts caches a key's
 * state for 2 s). No row is deleted before it has passed, so an add a process still took on the
 * old key's word is deleted with the rest.
 */
export const KEYS_REFUSED_WITHIN_MS = 5_000;
/** Rows one statement deletes (on SQLite each takes the write lock intake also takes). */
export const ERASE_STEP_ROWS = 200;
/** New items one statement cancels, per batch. */
const CANCEL_STEP_ROWS = 500;
/** How soon a draining erase looks again at calls in flight. */
const DRAIN_POLL_MS = 250;

/** What an erase did, as it goes: for the CLI's progress on stderr and the worker's log. */
export type ErasureProgress =
  | { kind: "keysRevoked"; at: string }
  | { kind: "cancelled"; items: number }
  | { kind: "draining"; callsInFlight: number; keysRefusedAt: string }
  | { kind: "deleting"; items: number }
  | { kind: "deleted"; table: string; rows: number };

export interface AdvanceOptions {
  /** How long this call may go on deleting before it hands back; a step under way ends first. */
  budgetMs: number;
  onProgress?: (progress: ErasureProgress) => void;
  stepRows?: number;
  clock?: () => Date;
}

export type ErasureAdvance =
  | { kind: "erased"; erased: CompanyErased }
  /** Draining: calls are in flight, or the revoked keys may still be taken somewhere; look again then. */
  | { kind: "waiting"; retryInMs: number }
  /** The budget is spent with rows left. */
  | { kind: "deleting" }
  /** No erase of the company is under way (another run ended it). */
  | { kind: "none" };

/** Takes the erase of `companyId` as far as it can go now, within `budgetMs` of deleting. */
export async function advanceCompanyErasure(store: Store, companyId: number, options: AdvanceOptions): Promise<ErasureAdvance> {
  const clock = options.clock ?? (() => new Date());
  const progress = options.onProgress ?? (() => undefined);
  const deadline = Date.now() + options.budgetMs;
  let erasure = await store.companyErasure(companyId);
  if (!erasure) return { kind: "none" };
  if (erasure.phase === "revoking") {
    erasure = await store.revokeCompanyKeys(companyId, clock().toISOString());
    progress({ kind: "keysRevoked", at: erasure.keysRevokedAt ?? clock().toISOString() });
  }
  if (erasure.phase === "draining") {
    // Rounds until one finds nothing New to cancel (the last of them, a batch at a time).
    let left;
    do {
      left = await store.stopCompanyWork(companyId, { now: clock().toISOString(), limit: CANCEL_STEP_ROWS });
      if (left.cancelled > 0) progress({ kind: "cancelled", items: left.cancelled });
    } while (left.cancelled > 0);
    const keysRefusedAt = Date.parse(erasure.keysRevokedAt ?? clock().toISOString()) + KEYS_REFUSED_WITHIN_MS;
    const untilRefused = keysRefusedAt - clock().getTime();
    if (left.callsInFlight > 0 || untilRefused > 0) {
      progress({ kind: "draining", callsInFlight: left.callsInFlight, keysRefusedAt: new Date(keysRefusedAt).toISOString() });
      return { kind: "waiting", retryInMs: Math.max(1, Math.min(DRAIN_POLL_MS, untilRefused > 0 ? untilRefused : DRAIN_POLL_MS)) };
    }
    erasure = await store.beginDeletingCompany(companyId);
    progress({ kind: "deleting", items: erasure.items ?? 0 });
  }
  for (;;) {
    const startedAt = performance.now();
    const step = await store.deleteCompanyRows(companyId, options.stepRows ?? ERASE_STEP_ROWS);
    if (step) {
      await afterErasingStep(store, step.rows, startedAt);
      progress({ kind: "deleted", ...step });
      if (Date.now() >= deadline) return { kind: "deleting" };
      continue;
    }
    const end = await store.finishCompanyErasure(companyId, clock().toISOString());
    if (end.kind === "erased") return end;
    if (end.kind === "endedElsewhere") return { kind: "none" };
    // A row came back (a key made meanwhile): delete on.
  }
}

export type EraseOutcome =
  | { kind: "erased"; erased: CompanyErased }
  /** Nothing to do: the company id's last erase ended already (a run again after one that finished). */
  | { kind: "alreadyErased"; erased: CompanyErased }
  | { kind: "notFound" };

/**
 * The CLI's erase: begins it (or resumes the one under way, as it was asked for then) and takes it
 * to its end, waiting while it drains; `signal` stops it between steps (a later run resumes).
 */
export async function eraseCompany(
  store: Store,
  companyId: number,
  action: OperatorAction,
  options: { onProgress?: (progress: ErasureProgress) => void; signal?: AbortSignal; stepRows?: number } = {},
): Promise<EraseOutcome> {
  const begun = await store.beginCompanyErasure(companyId, action);
  if (begun.kind === "notFound") {
    const last = await store.lastCompanyErasure(companyId);
    return last ? { kind: "alreadyErased", erased: last } : { kind: "notFound" };
  }
  for (;;) {
    options.signal?.throwIfAborted();
    const step = await advanceCompanyErasure(store, companyId, { budgetMs: 1000, ...options });
    if (step.kind === "erased") return step;
    if (step.kind === "none") {
      const last = await store.lastCompanyErasure(companyId);
      return last ? { kind: "alreadyErased", erased: last } : { kind: "notFound" };
    }
    if (step.kind === "waiting") await sleep(step.retryInMs, undefined, options.signal ? { signal: options.signal } : {});
  }
}

export interface ErasureRunner {
  stop(): Promise<void>;
}

/**
 * The worker role's part (SPEC §22): carries on every erase under way, begun by the operator API
 * or left by a CLI run that was killed, in bounded steps of `budgetMs`, and looks for new ones
 * every `intervalMs`. Its log lines name ids and counts only.
 */
export function startErasureRunner(deps: {
  store: Store;
  logger: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  intervalMs?: number;
  budgetMs?: number;
}): ErasureRunner {
  const { store, logger } = deps;
  const stopping = new AbortController();
  const onProgress = (companyId: number) => (progress: ErasureProgress) => {
    if (progress.kind === "keysRevoked") logger.info({ companyId }, "erase: the company's keys are revoked");
    if (progress.kind === "deleting") logger.info({ companyId, items: progress.items }, "erase: the company's work is stopped; deleting its rows");
  };
  /** One look at every erase under way; true when one has rows left to delete now. */
  const round = async (): Promise<boolean> => {
    let more = false;
    for (const { companyId } of await store.companyErasures()) {
      if (stopping.signal.aborted) break;
      const step = await advanceCompanyErasure(store, companyId, { budgetMs: deps.budgetMs ?? 2000, onProgress: onProgress(companyId) });
      if (step.kind === "deleting") more = true;
      if (step.kind === "erased") logger.info({ companyId, items: step.erased.items }, "erase: company erased");
    }
    return more;
  };
  const done = (async () => {
    while (!stopping.signal.aborted) {
      const more = await round().catch((error: unknown) => {
        logger.warn({ err: error }, "erase: a step failed; the next round tries again");
        return false;
      });
      await sleep(more ? 0 : (deps.intervalMs ?? 1000), undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await done;
    },
  };
}
