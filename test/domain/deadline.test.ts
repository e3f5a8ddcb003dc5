import assert from "node:assert/strict";
import { test } from "node:test";
import { deadlineFor, knowsHolidays, type DeadlineRule } from "../../src/domain/deadline.ts";

const NL: DeadlineRule = { timeZone: "Europe/Amsterdam", workingDays: 2, holidays: "NL", cutoff: "12:00" };

test("SPEC §10's example: transport Monday 28 December 2026 → Wednesday 23 December 12:00 in Amsterdam", () => {
  assert.equal(deadlineFor("2026-12-28T08:00:00Z", NL), "2026-12-23T11:00:00.000Z");
});

test("an ordinary week: Thursday's transport → Tuesday 12:00", () => {
  assert.equal(deadlineFor("2026-11-26T10:00:00Z", NL), "2026-11-24T11:00:00.000Z");
});

test("weekends are skipped: Monday's transport → Thursday before", () => {
  assert.equal(deadlineFor("2026-11-30T10:00:00Z", NL), "2026-11-26T11:00:00.000Z");
});

test("Easter Monday and King's Day are not working days; Good Friday (not a public holiday in NL) is", () => {
  // Tuesday 7 April 2026, after Easter Monday 6 April: back over the Easter weekend to Thursday 2 April.
  assert.equal(deadlineFor("2026-04-07T09:00:00Z", NL), "2026-04-02T10:00:00.000Z");
  // Wednesday 29 April 2026: back over King's Day (Monday 27 April) to Friday 24 April.
  assert.equal(deadlineFor("2026-04-29T09:00:00Z", NL), "2026-04-24T10:00:00.000Z");
});

test("the calendar day is the one in the rule's time zone, and the cutoff follows daylight saving time", () => {
  // 23:30 UTC on Sunday 29 March 2026 is already Monday 30 March in Amsterdam (summer time from 29 March).
  assert.equal(deadlineFor("2026-03-29T23:30:00Z", NL), "2026-03-26T11:00:00.000Z");
  // Winter time: 12:00 in Amsterdam is 11:00 UTC; summer time: 10:00 UTC.
  assert.equal(deadlineFor("2026-07-09T00:00:00+02:00", NL), "2026-07-07T10:00:00.000Z");
});

test("other rules: zero working days, another cutoff, another country", () => {
  assert.equal(deadlineFor("2026-11-26T10:00:00Z", { ...NL, workingDays: 0, cutoff: "09:30" }), "2026-11-26T08:30:00.000Z");
  // 3 October is German Unity Day; Monday 5 October 2026 with 1 working day → Friday 2 October.
  assert.equal(deadlineFor("2026-10-05T10:00:00Z", { timeZone: "Europe/Berlin", workingDays: 1, holidays: "DE", cutoff: "12:00" }), "2026-10-02T10:00:00.000Z");
});

test("known and unknown holiday calendars", () => {
  assert.equal(knowsHolidays("NL"), true);
  assert.equal(knowsHolidays("DE-BY"), true);
  assert.equal(knowsHolidays("XX"), false);
  assert.equal(knowsHolidays("NL-ZZ"), false);
});

test("years 0–99 are those years, not 1900–1999: their weekdays and fixed holidays, local mean time for the cutoff", () => {
  // Date.UTC(99, …) is 1999; the bug gave 1999-05-28. Amsterdam kept local mean time (+00:17:30) until 1835.
  assert.match(deadlineFor("0099-06-01T08:00:00Z", NL), /^0099-05-2[5-8]T11:42:30\.000Z$/);
  // Wednesday 28 December 0050 (as in 2050: 400 years repeat the weekdays) → over Christmas (Monday 26) to Friday 23 December.
  assert.equal(deadlineFor("0050-12-28T12:00:00Z", NL), "0050-12-23T11:42:30.000Z");
  assert.equal(deadlineFor("0100-12-28T12:00:00Z", NL).slice(0, 4), "0100");
  // Before year 1 the stores hold nothing: a deadline that would fall there is due at the first instant of year 1.
  assert.equal(deadlineFor("0001-01-02T12:00:00Z", NL), "0001-01-01T00:00:00.000Z");
});
