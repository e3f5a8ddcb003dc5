/**
 * Issue 36, defect 6 (SPEC §20): a timeout from `AbortSignal.timeout()` inside `AbortSignal.any()`
 * could be garbage-collected before it fired, and a webhook, an authority call or an SDK call
 * then ran on long past its timeout. Each is checked in a child process that forces full
 * collections every 5 ms while the call waits on a server that never finishes its answer.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { hardTimeout } from "../../src/lib/hard-timeout.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const TIMEOUT_MS = 500;
/** The calls must end near their timeout; the trickling answers would run for minutes. */
const LATEST_MS = TIMEOUT_MS + 2500;

test("webhook, authority and SDK calls end at their timeout, round after round, while the garbage collector runs", { timeout: HANG_TIMEOUT_MS }, () => {
  const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "test/helpers/timeouts-under-gc.ts"], {
    encoding: "utf8",
    timeout: 90_000,
    env: { ...process.env, TIMEOUT_MS: String(TIMEOUT_MS), ROUNDS: "3" },
  });
  assert.equal(child.status, 0, child.stderr);
  const results = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Record<string, number[]>;
  assert.deepEqual(Object.keys(results).sort(), ["authority", "sdk", "webhook"]);
  for (const [call, durations] of Object.entries(results)) {
    assert.equal(durations.length, 3, call);
    for (const ms of durations) {
      assert.ok(ms >= TIMEOUT_MS - 50 && ms <= LATEST_MS, `${call} ended after ${ms} ms, timeout ${TIMEOUT_MS} ms: ${JSON.stringify(results)}`);
    }
  }
});

test("hardTimeout: aborts with a TimeoutError at its time, with the parent's reason when that aborts first, and not at all once cleared", async () => {
  const timedOut = hardTimeout(20);
  const reason = await new Promise<unknown>((resolve) => timedOut.signal.addEventListener("abort", () => resolve(timedOut.signal.reason)));
  assert.equal((reason as DOMException).name, "TimeoutError");

  const parent = new AbortController();
  const child = hardTimeout(60_000, parent.signal);
  parent.abort(new Error("stopping"));
  assert.equal(child.signal.aborted, true);
  assert.equal((child.signal.reason as Error).message, "stopping");
  child.clear();

  const alreadyAborted = hardTimeout(60_000, AbortSignal.abort("gone"));
  assert.equal(alreadyAborted.signal.reason, "gone");

  const cleared = hardTimeout(10);
  cleared.clear();
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(cleared.signal.aborted, false);
});
