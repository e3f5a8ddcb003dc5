/**
 * The cost of picking the next claim (SPEC §14, "Scale"): `claimFilingWork` timed on a queue of
 * a few due items and on one of 100,000 over 1,000 companies, on a fresh store each. The two are
 * measured in turns, claim by claim, after a warm-up, so drift on a shared machine hits both
 * alike. Each claim is given back at once (untimed), so the queue keeps its size.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { WORK_TYPE_AUTHORITY_RVDM } from "../../src/domain/views.ts";
import { openStore } from "../../src/store/open-store.ts";
import type { Store } from "../../src/store/store.ts";
import { PRELOAD_REQUEST, type BenchStore } from "./stores.ts";

export interface ClaimCostCase {
  items: number;
  companies: number;
}

export interface ClaimCost extends ClaimCostCase {
  claims: number;
  p50Ms: number;
  p95Ms: number;
  meanMs: number;
}

const HOUR = 3600_000;

export function openQueue(location: BenchStore): Promise<Store> {
  return openStore(location.databaseUrl.startsWith("sqlite:") ? { kind: "sqlite", path: location.databaseUrl.slice(7) } : { kind: "postgres", url: location.databaseUrl, poolSize: 4 });
}

/** A fresh store seeded with `items` due items over `companies` (four deadlines to come). */
export async function seedQueue(location: BenchStore, input: ClaimCostCase, log: (line: string) => void): Promise<Store> {
  const store = await openQueue(location);
  const perCompany = Math.ceil(input.items / input.companies);
  const request = JSON.parse(PRELOAD_REQUEST) as Record<string, unknown>;
  const base = Date.now();
  let added = 0;
  for (let c = 1; c <= input.companies && added < input.items; c += 1) {
    await store.createCompany({ companyId: c, name: `Company ${c}` });
    const count = Math.min(perCompany, input.items - added);
    const items = Array.from({ length: count }, (_, i) => ({
      customerReference: `cost-${c}-${i}`,
      documentReference: null,
      webhookUrl: null,
      request,
      deadlineAt: new Date(base + (1 + ((c + i) % 4)) * 24 * HOUR).toISOString(),
    }));
    for (let from = 0; from < items.length; from += 1000) {
      await store.addWorkItems({ companyId: c, workType: WORK_TYPE_AUTHORITY_RVDM, batchMaxItems: 1000, items: items.slice(from, from + 1000) });
    }
    await store.queueBatches(c, new Date().toISOString());
    added += count;
    if (c % 100 === 0) log(`claim cost: ${added}/${input.items} items queued`);
  }
  if (location.kind === "postgres") await settlePostgres(location.databaseUrl);
  return store;
}

/**
 * The queue as autovacuum leaves it, not as a bulk load does: the seed's 100,000 inserts and
 * their updates (taken up into lanes) leave as many dead rows, pages without hint bits and no
 * statistics, which the first claims after it would pay for (and, without statistics, the
 * planner would not show the plans a running service gets). VACUUM (ANALYZE) and a checkpoint
 * make both queues what a service sees between two autovacuum runs.
 */
async function settlePostgres(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("VACUUM (ANALYZE)");
    await client.query("CHECKPOINT");
  } finally {
    await client.end();
  }
}

/** One claim of `limit`, timed, then given back. */
async function timedClaim(store: Store, limit: number): Promise<number> {
  const now = new Date().toISOString();
  const started = performance.now();
  const claimed = await store.claimFilingWork({ owner: "cost", now, dueBefore: now, leaseExpiresAt: new Date(Date.now() + HOUR).toISOString(), limit });
  const ms = performance.now() - started;
  if (claimed.length === 0) throw new Error("a claim found nothing in the queue");
  await store.releaseItems(claimed.map((item) => ({ companyId: item.companyId, workItemId: item.workItemId, owner: "cost" })), { now, dueAt: now, reason: "measured" });
  return ms;
}

/**
 * Claims on each queue, in `blocks` blocks: each block opens every queue's store anew and, one
 * queue after the other (the order alternates from block to block, so drift on a shared machine
 * hits both alike), makes `warmUp` untimed claims and then `claims` timed ones in a row, as a
 * worker does. Alternating claim by claim instead made whichever queue came after the other's
 * give-back pay for it: on PostgreSQL two queues of 10 items differed by up to 2.4× that way,
 * and the 100,000-item queue cost 1.7–1.9× the small one, against 1.0–1.1× in runs of 50.
 */
export async function measureClaimCosts(
  queues: Array<{ location: BenchStore; size: ClaimCostCase }>,
  input: { blocks: number; claims: number; warmUp: number; limit: number },
  log: (line: string) => void,
): Promise<ClaimCost[]> {
  const times = queues.map(() => [] as number[]);
  for (let block = 0; block < input.blocks; block += 1) {
    const stores = await Promise.all(queues.map(({ location }) => openQueue(location)));
    try {
      const order = [...stores.keys()];
      if (block % 2 === 1) order.reverse();
      for (const index of order) {
        for (let i = 0; i < input.warmUp + input.claims; i += 1) {
          const ms = await timedClaim(stores[index]!, input.limit);
          if (i >= input.warmUp) times[index]!.push(ms);
        }
      }
    } finally {
      for (const store of stores) await store.close();
    }
    log(`claim cost: block ${block + 1}/${input.blocks} measured`);
  }
  return queues.map(({ size }, index) => {
    const sorted = times[index]!.sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return { ...size, claims: sorted.length, p50Ms: at(0.5), p95Ms: at(0.95), meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length };
  });
}
