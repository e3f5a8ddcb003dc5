import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { startBotCron } from "../../src/bot/cron.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

test("a run that throws never stops the schedule; stop() waits for the run in flight and ends it", { timeout: HANG_TIMEOUT_MS }, async () => {
  const errors: unknown[] = [];
  let calls = 0;
  let running = 0;
  let finished = 0;
  const cron = startBotCron({
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
    assert.ok(cron.nextRunAt());
    await waitUntil("a second run after the failing one", () => calls >= 2 && running === 1, 5_000, 10);
  } finally {
    await cron.stop();
  }
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /store unavailable/);
  assert.equal(running, 0, "stop() waited for the run in flight");
  const callsAtStop = calls;
  assert.equal(finished, callsAtStop - 1);
  await sleep(1200);
  assert.equal(calls, callsAtStop, "no run after stop()");
  assert.equal(cron.nextRunAt(), null);
});

test("the schedule interval is the gap around now between two scheduled passes, however uneven the schedule", async () => {
  const idle = async () => ({ batches: 0, submitted: 0, succeeded: 0, failed: 0, retried: 0 });
  const everyMinute = startBotCron({ schedule: "* * * * *", run: idle });
  // Weekdays 09:00-17:55. Without a time zone croner reads the pattern in the process's, as Date reads the times below.
  const officeHours = startBotCron({ schedule: "*/5 9-17 * * 1-5", run: idle });
  try {
    assert.equal(everyMinute.scheduleIntervalSeconds(new Date("2026-11-27T10:00:30Z")), 60);
    const at = (local: string) => new Date(local);
    assert.equal(officeHours.scheduleIntervalSeconds(at("2026-11-27T10:02:00")), 300, "Friday morning: every five minutes");
    assert.equal(
      officeHours.scheduleIntervalSeconds(at("2026-11-28T12:00:00")),
      (Date.parse("2026-11-30T09:00:00") - Date.parse("2026-11-27T17:55:00")) / 1000,
      "Saturday: from Friday's last pass to Monday's first",
    );
  } finally {
    await everyMinute.stop();
    await officeHours.stop();
  }
  assert.equal(everyMinute.scheduleIntervalSeconds(), 0, "stopped: no interval");
});
