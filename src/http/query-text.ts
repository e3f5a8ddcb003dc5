/**
 * Query strings may not carry U+0000, as bodies may not (SPEC §4's text rules): PostgreSQL text
 * cannot hold it, and a filter with it answered 500 there. One hook for every route, the
 * console's included, so no filter can forget the check.
 */
import type { FastifyInstance } from "fastify";
import { ApiError, type FieldErrors } from "../errors.ts";

const NUL = "\u0000";

function fieldsWithNul(query: unknown): FieldErrors | undefined {
  if (query === null || typeof query !== "object") return undefined;
  let errors: FieldErrors | undefined;
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (name.includes(NUL) || values.some((text) => typeof text === "string" && text.includes(NUL))) {
      (errors ??= {})[name.replaceAll(NUL, "\\u0000")] = ["must not contain U+0000"];
    }
  }
  return errors;
}

export function refuseNulInQuery(app: FastifyInstance): void {
  // A callback hook: it runs on every request, and an async one costs a promise each.
  app.addHook("preValidation", (request, _reply, done) => {
    const errors = request.url.includes("%00") ? fieldsWithNul(request.query) : undefined;
    if (!errors) return done();
    done(new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors }));
  });
}
