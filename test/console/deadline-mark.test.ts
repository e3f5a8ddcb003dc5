/** "Overdue", "At risk" and "Due today" (SPEC §16): New items only; past the deadline, less than two hours before it, or later today in CONSOLE_TZ. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineMark, endOfDayIn } from "../../src/console/deadline-mark.ts";

const now = new Date("2026-11-25T10:00:00.000Z");
const ZONE = "Europe/Amsterdam";
const minutes = (n: number) => new Date(now.getTime() + n * 60_000).toISOString();

test("a New item is Overdue once its deadline passed, At risk within two hours of it, unmarked before", () => {
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(-1) }, now, ZONE), "Overdue");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(0) }, now, ZONE), "At risk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(119) }, now, ZONE), "At risk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(120) }, now, ZONE), "Due today", "11:00 in Amsterdam; 13:00 is today there");
  assert.equal(deadlineMark({ status: "New", deadlineAt: null }, now, ZONE), undefined, "no deadline, no mark");
});

test("an item the bot took up carries no mark, whatever its deadline", () => {
  for (const status of ["InProgress", "Submitted", "Successful", "Failed", "Cancelled"] as const) {
    assert.equal(deadlineMark({ status, deadlineAt: minutes(-600) }, now, ZONE), undefined, status);
  }
});

test("Due today is the rest of the calendar day in the console's time zone, not in UTC", () => {
  // 10:00 UTC is 11:00 in Amsterdam: its day ends at 23:00 UTC.
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T22:59:00.000Z" }, now, ZONE), "Due today");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T23:00:00.000Z" }, now, ZONE), undefined, "midnight in Amsterdam is tomorrow");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T23:30:00.000Z" }, now, "UTC"), "Due today", "still today in UTC");
  assert.equal(deadlineMark({ status: "Submitted", deadlineAt: "2026-11-25T20:00:00.000Z" }, now, ZONE), undefined, "a filed item carries no mark");
  // Across the autumn DST change (25 hours): the day still ends at the next local midnight.
  assert.equal(endOfDayIn(new Date("2026-10-25T10:00:00.000Z"), ZONE).toISOString(), "2026-10-25T23:00:00.000Z");
  assert.equal(endOfDayIn(new Date("2026-03-29T10:00:00.000Z"), ZONE).toISOString(), "2026-03-29T22:00:00.000Z");
});
