import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { startBotCron } from "../../src/bot/cron.ts";
import { waitUntil } from "../helpers/waiting.ts";

test("a run that throws never stops the schedule; stop() waits for the run in flight and ends it", { timeout: 20_000 }, async () => {
  const errors: unknown[] = [];
  let calls = 0;
  let running = 0;
  let finished = 0;
  const scheduler = startBotCron({
    schedule: "* * * * * *",
    logger: { info: () => undefined, error: (obj) => errors.push((obj as { err: unknown }).err) },
    run: async () => {
      calls += 1;
      if (calls === 1) throw new Error("store unavailable");
      running += 1;
      await sleep(300);
      running -= 1;
      finished += 1;
      return { batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 };
    },
  });
  try {
    assert.ok(scheduler.nextRunAt());
    await waitUntil("a second run after the failing one", () => calls >= 2 && running === 1, 5_000, 10);
  } finally {
    await scheduler.stop();
  }
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /store unavailable/);
  assert.equal(running, 0, "stop() waited for the run in flight");
  const callsAtStop = calls;
  assert.equal(finished, callsAtStop - 1);
  await sleep(1200);
  assert.equal(calls, callsAtStop, "no run after stop()");
  assert.equal(scheduler.nextRunAt(), null);
});
