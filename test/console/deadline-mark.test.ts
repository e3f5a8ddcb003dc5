/** "Overdue" and "At risk" (SPEC §16): New items only; past the deadline, or less than two hours before it. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineMark } from "../../src/console/deadline-mark.ts";

const now = new Date("2026-11-25T10:00:00.000Z");
const minutes = (n: number) => new Date(now.getTime() + n * 60_000).toISOString();

test("a New item is Overdue once its deadline passed, At risk within two hours of it, unmarked before", () => {
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(-1) }, now), "Overdue");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(0) }, now), "At risk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(119) }, now), "At risk");
  assert.equal(deadlineMark({ status: "New", deadlineAt: minutes(120) }, now), undefined);
  assert.equal(deadlineMark({ status: "New", deadlineAt: null }, now), undefined, "no deadline, no mark");
});

test("an item the bot took up carries no mark, whatever its deadline", () => {
  for (const status of ["InProgress", "Submitted", "Successful", "Failed", "Cancelled"] as const) {
    assert.equal(deadlineMark({ status, deadlineAt: minutes(-600) }, now), undefined, status);
  }
});
