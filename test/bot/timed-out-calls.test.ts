/**
 * Issue 36, defect 4 (SPEC §20): with the authority slower than AUTHORITY_TIMEOUT_MS, the bot
 * freed a call's slot when it stopped waiting, while the authority still worked on the call; the
 * simulator then saw 6 calls in flight against a limit of 2. A call that times out now fails its
 * attempt, but keeps its connection and its slot until the authority answers (or
 * AUTHORITY_ABANDON_MS). Its late answer is not used: the retry's idempotency key files each item
 * once.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { availableBackends } from "../helpers/backends.ts";
import { withBot } from "../helpers/bot-harness.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

const TIMEOUT_MS = 1000;
const LATENCY_MS = 2500;
const LIMIT = 2;
const ITEMS = 6;

for (const backend of await availableBackends()) {
  describe(`calls that time out [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("keep their slot until the authority answers: never more calls in flight than the limit, and each item filed once", () =>
      withBot(
        backend,
        {
          AUTHORITY_TIMEOUT_MS: String(TIMEOUT_MS),
          AUTHORITY_MAX_CONCURRENCY: String(LIMIT),
          AUTHORITY_MAX_RPS: "0",
          // Every timeout is a transient failure: the breaker must not stop the calls this test counts.
          AUTHORITY_BREAKER_FAILURES: "1000",
          BOT_MAX_ATTEMPTS: "100",
        },
        async (s) => {
          const adapter = createHttpAuthorityAdapter({ baseUrl: s.sim.url, timeoutMs: TIMEOUT_MS, abandonMs: 60_000 });
          try {
            const ids: number[] = [];
            for (let index = 0; index < ITEMS; index++) ids.push((await s.add(validWorkItem({ customerReference: `slow-${index}` }))).workItemId);
            s.sim.behaviour.latencyMs = LATENCY_MS;

            // Items are retried 20–40 ms after each timeout, so the pass keeps calling until it is stopped.
            const stop = new AbortController();
            const stopAt = setTimeout(() => stop.abort(), 3 * LATENCY_MS);
            await s.run({ adapter, signal: stop.signal });
            clearTimeout(stopAt);
            const slow = s.sim.stats();
            assert.ok(slow.requests >= 2 * LIMIT, `the slow authority got ${slow.requests} calls, enough to have overrun the limit before`);
            assert.ok(slow.maxInFlight <= LIMIT, `at most ${LIMIT} calls in flight at the authority, saw ${slow.maxInFlight}`);
            const timedOut = await s.t.query<{ attempts: number; last_error: string | null }>("SELECT attempts, last_error FROM work_items ORDER BY work_item_id");
            assert.ok(
              timedOut.some((item) => Number(item.attempts) >= 1 && /within 1000 ms/.test(item.last_error ?? "")),
              `attempts failed at the timeout: ${JSON.stringify(timedOut)}`,
            );

            // The authority recovers; the connections it still held end with its late answers.
            s.sim.behaviour.latencyMs = 0;
            await waitUntil("the late answers", () => s.sim.stats().inFlight === 0, 4 * LATENCY_MS);
            await waitUntil(
              "every item filed",
              async () => {
                await s.run({ adapter });
                return (await Promise.all(ids.map((id) => s.item(id)))).every((item) => item.status === "Successful");
              },
              30_000,
              100,
            );
            const done = s.sim.stats();
            assert.equal(done.registrations, ITEMS, "one application per item, however many times its submit was sent");
            assert.ok(done.maxInFlight <= LIMIT, `still at most ${LIMIT} in flight, saw ${done.maxInFlight}`);
          } finally {
            await adapter.close();
          }
        },
      ));
  });
}
