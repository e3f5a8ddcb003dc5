/**
 * The opaque cursor of the keyset-paged lists (newest first): it holds the id of the last row of
 * the page, and the next page starts below it. Clients pass `nextCursor` back as it is.
 */
import { ApiError } from "../../errors.ts";

const CURSOR_PREFIX = "v1:";

export const encodeCursor = (id: number) => Buffer.from(`${CURSOR_PREFIX}${id}`).toString("base64url");

/** The id a cursor holds; a 400 naming `cursor` when it is not one this service made. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const id = text.startsWith(CURSOR_PREFIX) ? Number(text.slice(CURSOR_PREFIX.length)) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", {
      errors: { cursor: ["is not a nextCursor of a previous page"] },
    });
  }
  return id;
}

/**
 * One page from rows read with `limit + 1` (the extra row only tells whether there is a next
 * page): the first `limit` rows, and the cursor of the last of them when more follow.
 */
export function keysetPage<T>(rows: T[], limit: number, idOf: (row: T) => number): { rows: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(idOf(last)) : null };
}
