/** Reading query and path parameters that may be missing, repeated or malformed, without a 500. */

/** The first string of each query parameter; repeated ones (`?a=1&a=2`) keep their first value. */
export function queryFields(query: unknown): Record<string, string> {
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  if (query === null || typeof query !== "object") return fields;
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    const first: unknown = Array.isArray(value) ? value[0] : value;
    if (typeof first === "string") fields[name] = first;
  }
  return fields;
}

/** A positive integer, or undefined when absent or malformed. */
export function positiveInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9][0-9]{0,15}$/.test(value)) return undefined;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : undefined;
}
