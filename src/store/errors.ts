/**
 * The store's own errors. Driver errors never leave the store: each backend maps its driver's
 * codes to these, and the HTTP error handler (src/errors.ts) maps these to answers.
 */

/** The database cannot be reached or cannot serve this now; the same call may succeed later. */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}

/** A create that collides with an existing row (e.g. a company id already taken). */
export class AlreadyExistsError extends Error {
  override name = "AlreadyExistsError";
}
