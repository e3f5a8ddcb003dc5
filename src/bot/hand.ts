/**
 * Both loops of a pass keep a hand of claimed items (BOT_CLAIM_SIZE), topped up as items finish,
 * so the authority's slots never wait for a claim's round trip; and both wait the same ways:
 * for the probe of an open breaker, or for a time or another event, whichever comes first.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { hardTimeout } from "../lib/hard-timeout.ts";
import { going, type Pass } from "./pass-state.ts";

/**
 * Keeps up to BOT_CLAIM_SIZE items in hand, claiming more when half of them are done: the items
 * wait in the gate's line in queue order, so the authority's slots never idle while a claim is
 * on its way.
 */
export async function inHand<I extends { companyId: number; workBatchId: number; workItemId: number }>(
  pass: Pass,
  claim: (limit: number) => Promise<I[]>,
  work: (item: I) => Promise<void>,
  whenEmpty: () => Promise<boolean>,
  /** When to claim again even if none of the items in hand is done (the next refresh), if ever. */
  claimAgainAt: () => number = () => Number.POSITIVE_INFINITY,
): Promise<void> {
  const size = pass.deps.config.botClaimSize;
  // Top the hand up as items finish (a quarter of a claim at least, so claims are not one by
  // one): the slots never wait for a claim's round trip.
  const topUp = Math.max(1, Math.floor(size / 4));
  const held = new Map<number, Promise<void>>();
  while (going(pass)) {
    if (size - held.size < topUp) {
      await Promise.race(held.values());
      continue;
    }
    // With the breaker open nothing is claimed, so nothing is taken and no attempt spent.
    const may = await pass.deps.gate.mayCall();
    if (!may) {
      if (await untilProbeDue(pass)) continue;
      pass.stop ??= { kind: "breakerOpen" };
      break;
    }
    // Only the probe may go: a whole hand would mostly be given back. One item, when none is in hand.
    if (may === "probe" && held.size > 0) {
      await Promise.race(held.values());
      continue;
    }
    const items = await claim(may === "probe" ? 1 : size - held.size);
    if (items.length === 0) {
      // The slots the hand leaves free would idle until one of its items is done: a refresh that
      // comes first may have work for them.
      if (held.size > 0) await timeOr(claimAgainAt() - pass.clock().getTime(), Promise.race(held.values()));
      else if (!(await whenEmpty())) break;
      continue;
    }
    for (const item of items) {
      pass.batches.add(`${item.companyId}/${item.workBatchId}`);
      pass.counts.batches = pass.batches.size;
      held.set(
        item.workItemId,
        work(item)
          .catch((error: unknown) => {
            pass.stop ??= { kind: "failure", error };
          })
          .finally(() => {
            held.delete(item.workItemId);
          }),
      );
    }
  }
  await Promise.all(held.values());
}

/**
 * Waits for `other`, or `waitMs` (when finite) or `signal`, whichever comes first; true when the
 * time ran out. The timer goes with the wait: left running, it would hold the process up to a
 * schedule period.
 */
export async function timeOr(waitMs: number, other: Promise<unknown>, signal?: AbortSignal): Promise<boolean> {
  if (!Number.isFinite(waitMs)) {
    await other;
    return false;
  }
  const wait = hardTimeout(Math.max(0, waitMs), signal);
  const ended = new Promise<boolean>((resolve) => wait.signal.addEventListener("abort", () => resolve(signal?.aborted !== true), { once: true }));
  try {
    return await Promise.race([ended, other.then(() => false)]);
  } finally {
    wait.clear();
  }
}

/**
 * With the breaker open, a pass on a schedule waits for the probe's time when that comes before
 * the next pass would begin, and goes on then: the probe goes when the breaker allows it, not
 * when the next pass happens to start (up to a whole schedule period later; in the deadline
 * bench, after a 6 s outage, the authority sat idle 1–2 s instead of at most the breaker's 1 s).
 * True when it waited and the pass may go on; a pass with no schedule after it ends instead.
 */
async function untilProbeDue(pass: Pass): Promise<boolean> {
  if (!going(pass) || !Number.isFinite(pass.refreshAt)) return false;
  const at = await pass.deps.gate.nextCallAt();
  if (at >= pass.refreshAt) return false;
  const waitMs = at - pass.clock().getTime();
  if (waitMs > 0) await sleep(waitMs, undefined, { signal: pass.deps.signal }).catch(() => undefined);
  return going(pass);
}
