/**
 * How near a deadline is (SPEC §16, §25; src/domain/due.ts): Overdue, At risk and Due today for
 * New items only, "today" in the console's time zone and, on a day off, the next working day;
 * the `due` filters' windows agree with the marks.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineMark, dueDay, dueWindow, endOfDayIn, isOverdue, type DueCalendar } from "../../src/domain/due.ts";

const AMSTERDAM: DueCalendar = { timeZone: "Europe/Amsterdam", holidays: "NL" };
const UTC: DueCalendar = { timeZone: "UTC", holidays: "NL" };
/** A Wednesday, 11:00 in Amsterdam. */
const now = new Date("2026-11-25T10:00:00.000Z");
const minutes = (n: number) => new Date(now.getTime() + n * 60_000).toISOString();

test("a New item is overdue once its deadline passed, at risk within two hours of it, due today before the day ends", () => {
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(-1) }, now, AMSTERDAM), "overdue");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(0) }, now, AMSTERDAM), "atRisk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(119) }, now, AMSTERDAM), "atRisk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(120) }, now, AMSTERDAM), "dueToday", "11:00 in Amsterdam; 13:00 is today there");
  assert.equal(deadlineMark({ status: "New", deadlineAt: null }, now, AMSTERDAM), null, "no deadline, no mark");
  assert.equal(isOverdue({ status: "New", deadlineAt: minutes(-1) }, now), true);
  assert.equal(isOverdue({ status: "New", deadlineAt: minutes(0) }, now), false, "due this very instant is not overdue yet");
});

test("an item the bot took up carries no mark and is not overdue, whatever its deadline", () => {
  for (const status of ["InProgress", "Submitted", "Successful", "Failed", "Cancelled", "Withdrawn"] as const) {
    assert.equal(deadlineMark({ status, deadlineAt: minutes(-600) }, now, AMSTERDAM), null, status);
    assert.equal(isOverdue({ status, deadlineAt: minutes(-600) }, now), false, status);
  }
});

test("today is the rest of the calendar day in the console's time zone, not in UTC", () => {
  // 10:00 UTC is 11:00 in Amsterdam: its day ends at 23:00 UTC.
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T22:59:00.000Z" }, now, AMSTERDAM), "dueToday");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T23:00:00.000Z" }, now, AMSTERDAM), null, "midnight in Amsterdam is tomorrow");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-25T23:30:00.000Z" }, now, UTC), "dueToday", "still today in UTC");
  // Across the DST changes (25 and 23 hours): the day still ends at the next local midnight.
  assert.equal(endOfDayIn(new Date("2026-10-25T10:00:00.000Z"), "Europe/Amsterdam").toISOString(), "2026-10-25T23:00:00.000Z");
  assert.equal(endOfDayIn(new Date("2026-03-29T10:00:00.000Z"), "Europe/Amsterdam").toISOString(), "2026-03-29T22:00:00.000Z");
});

test("on a weekend or a public holiday the due day is the next working day, which deadlines fall on", () => {
  const saturday = new Date("2026-11-28T09:00:00.000Z");
  assert.deepEqual(dueDay(saturday, AMSTERDAM), { start: new Date("2026-11-29T23:00:00.000Z"), end: new Date("2026-11-30T23:00:00.000Z"), today: false }, "Monday 30 Nov");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-11-30T11:00:00.000Z" }, saturday, AMSTERDAM), "dueToday", "Monday's noon deadline, seen on Saturday");
  assert.equal(deadlineMark({ status: "New", deadlineAt: "2026-12-01T11:00:00.000Z" }, saturday, AMSTERDAM), null, "Tuesday's is not");
  // Christmas Day and Boxing Day are public holidays in the Netherlands; 26 and 27 Dec 2026 are a weekend too.
  const christmas = new Date("2026-12-25T08:00:00.000Z");
  assert.equal(dueDay(christmas, AMSTERDAM).start.toISOString(), "2026-12-27T23:00:00.000Z", "Monday 28 Dec");
  assert.equal(dueDay(christmas, { timeZone: "Europe/Amsterdam", holidays: "US" }).start.toISOString(), "2026-12-27T23:00:00.000Z", "the weekend still is");
  assert.equal(dueDay(now, AMSTERDAM).today, true, "a Wednesday is its own due day");
});

test("the due filters' windows are the marks' instants", () => {
  assert.deepEqual(dueWindow("overdue", now, AMSTERDAM), { deadlineBefore: now.toISOString() });
  assert.deepEqual(dueWindow("today", now, AMSTERDAM), { deadlineAtOrAfter: now.toISOString(), deadlineBefore: "2026-11-25T23:00:00.000Z" });
  for (const offset of [-61, -1, 0, 1, 119, 120, 700, 779, 780, 3000]) {
    const item = { status: "New" as const, deadlineAt: minutes(offset) };
    const mark = deadlineMark(item, now, AMSTERDAM);
    const today = dueWindow("today", now, AMSTERDAM);
    const inToday = item.deadlineAt >= today.deadlineAtOrAfter! && item.deadlineAt < today.deadlineBefore;
    assert.equal(item.deadlineAt < dueWindow("overdue", now, AMSTERDAM).deadlineBefore, mark === "overdue", `${offset} min: overdue`);
    assert.equal(inToday, mark === "dueToday" || mark === "atRisk", `${offset} min: due today (${mark})`);
  }
});
