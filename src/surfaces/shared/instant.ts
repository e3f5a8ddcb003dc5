/** Date-time filters as the stores compare them: UTC ISO 8601 with milliseconds. */
import { ApiError } from "../../errors.ts";

/** `dateTime` passed the date-time format; a 400 naming `field` when Date still cannot hold it. */
export function toInstant(dateTime: string, field: string): string {
  const instant = new Date(dateTime);
  // The date-time format lets through what Date cannot hold (a leap second, year 275760+).
  if (Number.isNaN(instant.getTime())) {
    throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", {
      errors: { [field]: ["is not a date-time this service can compare"] },
    });
  }
  return instant.toISOString();
}
