/** Reading query and path parameters that may be missing, repeated or malformed, without a 500. */
import { ApiError } from "../errors.ts";

/**
 * The query parameters a page reads, each a string. One given more than once (`?a=1&a=2`) is a
 * 400 page naming it, as on every route of the API (SPEC §24); names the page does not read are
 * ignored, as on the integrator routes.
 */
export function queryFields<const Name extends string>(query: unknown, names: readonly Name[]): Partial<Record<Name, string>> {
  const fields: Partial<Record<Name, string>> = Object.create(null) as Partial<Record<Name, string>>;
  if (query === null || typeof query !== "object") return fields;
  const given = query as Record<string, unknown>;
  for (const name of names) {
    if (!Object.hasOwn(given, name)) continue;
    const value = given[name];
    if (Array.isArray(value)) throw new ApiError("VALIDATION_FAILED", `The address gives ${name} ${value.length} times; give it once.`);
    if (typeof value === "string") fields[name] = value;
  }
  return fields;
}

/** A positive integer, or undefined when absent or malformed. */
export function positiveInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9][0-9]{0,15}$/.test(value)) return undefined;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : undefined;
}
