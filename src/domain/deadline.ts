/**
 * The filing deadline of an export document (SPEC §10): the Authority wants it requested
 * `workingDays` working days before the transport, before `cutoff` local time. Working days are
 * Monday to Friday and not a public holiday of the `holidays` country (date-holidays, a
 * maintained library, rather than a table of our own).
 */
import { createRequire } from "node:module";
import type DateHolidays from "date-holidays";

/**
 * date-holidays with every country's calendar takes about 0.1 s to load, a third of a CLI call:
 * loaded on first use, so a command that never reckons a deadline does not pay for it.
 */
let holidaysLibrary: typeof DateHolidays | undefined;
const dateHolidays = () => (holidaysLibrary ??= createRequire(import.meta.url)("date-holidays") as typeof DateHolidays);

export interface DeadlineRule {
  /** IANA time zone of the calendar and the cutoff, e.g. Europe/Amsterdam. */
  timeZone: string;
  workingDays: number;
  /** Country (ISO 3166-1 alpha-2, optionally with a region, e.g. `NL` or `DE-BY`) whose public holidays are not working days. */
  holidays: string;
  /** Local time of day, `HH:MM`. */
  cutoff: string;
}

interface CalendarDay {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
}

/** Public holidays as `YYYY-MM-DD`, per rule country and year. */
const holidayCache = new Map<string, Set<string>>();

/**
 * date-holidays builds its dates with `new Date(year, …)`, which reads years 0–99 as 1900–1999
 * (and year 0 as this year). The Gregorian calendar repeats itself every 400 years, weekdays
 * included, so such a year asks for the same year 400 (or 800) years on and shifts the dates back.
 */
const GREGORIAN_CYCLE_YEARS = 400;
const FIRST_YEAR_THE_LIBRARY_READS = 100;

function publicHolidays(country: string, year: number): Set<string> {
  const key = `${country}/${year}`;
  let days = holidayCache.get(key);
  if (!days) {
    const [countryCode, region] = country.split("-");
    const Holidays = dateHolidays();
    const calendar = region ? new Holidays(countryCode!, region) : new Holidays(countryCode!);
    const cycles = year < FIRST_YEAR_THE_LIBRARY_READS ? Math.ceil((FIRST_YEAR_THE_LIBRARY_READS - year) / GREGORIAN_CYCLE_YEARS) : 0;
    const askedYear = year + cycles * GREGORIAN_CYCLE_YEARS;
    days = new Set(
      calendar
        .getHolidays(askedYear)
        .filter((holiday) => holiday.type === "public")
        .map((holiday) => `${padYear(year)}${holiday.date.slice(4, 10)}`),
    );
    holidayCache.set(key, days);
  }
  return days;
}

/** Whether date-holidays knows the country (and region); config uses it to refuse a typo at start. */
export function knowsHolidays(country: string): boolean {
  const [countryCode, region] = country.split("-");
  if (!countryCode) return false;
  const Holidays = dateHolidays();
  const known = new Holidays().getCountries();
  if (!known[countryCode.toUpperCase()]) return false;
  return region === undefined || Boolean(new Holidays().getStates(countryCode)?.[region.toUpperCase()]);
}

const pad = (value: number) => String(value).padStart(2, "0");
const padYear = (year: number) => (year < 0 ? `-${String(-year).padStart(6, "0")}` : String(year).padStart(4, "0"));
const isoDay = ({ year, month, day }: CalendarDay) => `${padYear(year)}-${pad(month)}-${pad(day)}`;

/** Date.UTC without its quirk of reading years 0–99 as 1900–1999: every year means itself. */
function utcMillis(year: number, monthIndex: number, day: number, hours = 0, minutes = 0, seconds = 0): number {
  const date = new Date(Date.UTC(2000, 0, 1, hours, minutes, seconds));
  date.setUTCFullYear(year, monthIndex, day);
  return date.getTime();
}

/** Formatters per time zone: building one costs far more than using it, and intake asks per item. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function wallClock(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * Offsets and deadlines already worked out. Intake asks once per item, and Intl's formatting
 * costs tens of microseconds; offsets change only on whole quarter hours of UTC, and a deadline
 * depends only on the calendar day. Emptied when large, so odd inputs cannot grow it for ever.
 */
const remembered = new Map<string, number | string>();
const REMEMBER_AT_MOST = 20_000;
function remember<T extends number | string>(key: string, work: () => T): T {
  let value = remembered.get(key) as T | undefined;
  if (value === undefined) {
    if (remembered.size >= REMEMBER_AT_MOST) remembered.clear();
    value = work();
    remembered.set(key, value);
  }
  return value;
}

const QUARTER_HOUR_MS = 900_000;

/** The calendar day of `instant` in `timeZone`. */
function calendarDayIn(instant: number, timeZone: string): CalendarDay {
  const offset = remember(`offset/${timeZone}/${Math.floor(instant / QUARTER_HOUR_MS)}`, () => offsetAt(instant, timeZone));
  const local = new Date(instant + offset);
  return { year: local.getUTCFullYear(), month: local.getUTCMonth() + 1, day: local.getUTCDate() };
}

/** Milliseconds `timeZone` is ahead of UTC at `instant`. */
function offsetAt(instant: number, timeZone: string): number {
  const parts = wallClock(timeZone).formatToParts(new Date(instant));
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  const number = (type: string) => Number(part(type));
  // Intl counts years before 1 as 1 BC, 2 BC, …; the proleptic Gregorian year of 1 BC is 0.
  const year = part("era") === "BC" ? 1 - number("year") : number("year");
  const local = utcMillis(year, number("month") - 1, number("day"), number("hour"), number("minute"), number("second"));
  return local - Math.floor(instant / 1000) * 1000;
}

/** The instant the calendar day of `instant` began in `timeZone` (local midnight, or the first hour a DST change left). */
export function startOfDayIn(instant: Date, timeZone: string): Date {
  return instantOf(calendarDayIn(instant.getTime(), timeZone), 0, 0, timeZone);
}

/** The UTC instant of a local wall-clock time in `timeZone`. */
function instantOf(day: CalendarDay, hours: number, minutes: number, timeZone: string): Date {
  const wall = utcMillis(day.year, day.month - 1, day.day, hours, minutes);
  // The offset at the guess can differ from the one at the answer across a DST change: settle it twice.
  let instant = wall - offsetAt(wall, timeZone);
  instant = wall - offsetAt(instant, timeZone);
  return new Date(instant);
}

function previousDay({ year, month, day }: CalendarDay): CalendarDay {
  const date = new Date(utcMillis(year, month - 1, day - 1));
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

function isWorkingDay(day: CalendarDay, country: string): boolean {
  const weekday = new Date(utcMillis(day.year, day.month - 1, day.day)).getUTCDay();
  return weekday !== 0 && weekday !== 6 && !publicHolidays(country, day.year).has(isoDay(day));
}

/** Whether the calendar day `instant` falls on in `timeZone` is a working day: Monday to Friday and no public holiday of `country`. */
export const isWorkingDayAt = (instant: Date, timeZone: string, country: string): boolean => isWorkingDay(calendarDayIn(instant.getTime(), timeZone), country);

/** An ISO 8601 date-time as an instant; one without an offset is UTC (SPEC §11.5), not local time as Date.parse would read it. */
export function utcInstant(dateTime: string): number {
  return Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(dateTime) ? dateTime : `${dateTime}Z`);
}

/** The same instant as ISO 8601 UTC with milliseconds and `Z`, as exportDate is stored and shown. */
export const toUtcIso = (dateTime: string): string => new Date(utcInstant(dateTime)).toISOString();

/**
 * The first instant the stores hold (PostgreSQL has no year 0). A transport in the first days of
 * year 1 would be due before it; it is due at this instant instead, overdue either way.
 */
const EARLIEST_DEADLINE = "0001-01-01T00:00:00.000Z";

/** `deadlineAt` for a transport on `exportDate` (an ISO 8601 date-time), as an ISO 8601 UTC instant. */
export function deadlineFor(exportDate: string, rule: DeadlineRule): string {
  const day = calendarDayIn(utcInstant(exportDate), rule.timeZone);
  const key = `deadline/${rule.timeZone}/${rule.workingDays}/${rule.holidays}/${rule.cutoff}/${isoDay(day)}`;
  const deadline = remember(key, () => workOutDeadline(day, rule));
  return deadline < EARLIEST_DEADLINE ? EARLIEST_DEADLINE : deadline;
}

function workOutDeadline(transportDay: CalendarDay, rule: DeadlineRule): string {
  let day = transportDay;
  for (let stepped = 0; stepped < rule.workingDays; ) {
    day = previousDay(day);
    if (isWorkingDay(day, rule.holidays)) stepped += 1;
  }
  const [hours, minutes] = rule.cutoff.split(":").map(Number) as [number, number];
  return instantOf(day, hours, minutes, rule.timeZone).toISOString();
}
