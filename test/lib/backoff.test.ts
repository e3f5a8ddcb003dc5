import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { AuthorityProtocolError, AuthorityUnavailableError } from "../../src/authority/protocol.ts";
import { backoffDelayMs, isRetryable } from "../../src/lib/backoff.ts";
import { forEachConcurrently } from "../../src/lib/concurrency.ts";

test("backoff: half fixed, half jitter, doubling per failure up to the cap, never zero", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 10_000_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (failures, baseMs, extra, r) => {
      const policy = { baseMs, maxMs: baseMs + extra };
      const step = Math.min(policy.maxMs, baseMs * 2 ** (failures - 1));
      const delay = backoffDelayMs(failures, policy, () => r);
      assert.ok(delay >= Math.floor(step / 2) && delay <= Math.ceil(step), `${delay} within [${step / 2}, ${step}]`);
      assert.ok(delay >= 1);
    }),
  );
  const policy = { baseMs: 1000, maxMs: 60_000 };
  assert.deepEqual([1, 2, 3, 4, 10].map((n) => backoffDelayMs(n, policy, () => 0)), [500, 1000, 2000, 4000, 30_000]);
  assert.deepEqual([1, 2, 10].map((n) => backoffDelayMs(n, policy, () => 0.999999)), [1000, 2000, 60_000]);
});

test("whether to retry is a property of the error", () => {
  assert.equal(isRetryable(new AuthorityUnavailableError("503")), true);
  assert.equal(isRetryable(new AuthorityProtocolError("404")), false);
  assert.equal(isRetryable(new Error("bug")), false);
  assert.equal(isRetryable({ retryable: true }), false, "only errors");
});

test("forEachConcurrently never runs more than the limit at once and runs every item", async () => {
  let running = 0;
  let peak = 0;
  const seen: number[] = [];
  await forEachConcurrently([...Array(20).keys()], 4, async (i) => {
    running += 1;
    peak = Math.max(peak, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    seen.push(i);
    running -= 1;
  });
  assert.equal(peak, 4);
  assert.deepEqual(seen.sort((a, b) => a - b), [...Array(20).keys()]);
});
