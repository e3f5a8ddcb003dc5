/**
 * Text neither store can hold (SPEC §20): U+0000, which PostgreSQL's text and jsonb refuse, and a
 * lone surrogate, which is no Unicode text at all (jsonb refuses its escape, and UTF-8 cannot
 * encode it). Such a string anywhere in a body, property names included, or in a query string is
 * refused with 400 naming where it is, before any route reads it. Checked here, once for every
 * route, so no field, form or filter can forget it, and nothing is half stored.
 */
import type { FastifyInstance } from "fastify";
import { ApiError, type FieldErrors } from "../errors.ts";

/** With the `u` flag a string is read by code point: a paired surrogate is one astral code point, a lone one is in Cs. */
// eslint-disable-next-line no-control-regex -- the control character is what this looks for
const UNSTORABLE = /\u0000|\p{Cs}/u;
const NUL = "\u0000";
const LONE_SURROGATE = /\p{Cs}/gu;

const problemWith = (text: string) => (text.includes(NUL) ? "must not contain U+0000" : "must not contain an unpaired surrogate (U+D800–U+DFFF)");

/** A name as a field path shows it: the characters that cannot be shown, as JSON escapes. */
const shown = (name: string) =>
  name.replaceAll(NUL, "\\u0000").replace(LONE_SURROGATE, (unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);

/**
 * Every place in `value` (a parsed body, form or query) that holds unstorable text, as field
 * paths the way validation names them (`changes.note.sendValue`, `items.3.productName.sendValue`);
 * undefined when there is none. The body is at most MAX_JSON_DEPTH deep, so recursion is safe.
 */
export function unstorableText(value: unknown): FieldErrors | undefined {
  let errors: Map<string, string[]> | undefined;
  const add = (path: string, message: string) => {
    errors ??= new Map();
    const list = errors.get(path) ?? [];
    if (!list.includes(message)) list.push(message);
    errors.set(path, list);
  };
  const visit = (node: unknown, path: string[]) => {
    if (typeof node === "string") {
      if (UNSTORABLE.test(node)) add(path.length > 0 ? path.join(".") : "$", problemWith(node));
    } else if (Array.isArray(node)) {
      node.forEach((element, index) => visit(element, [...path, String(index)]));
    } else if (node !== null && typeof node === "object") {
      for (const [name, child] of Object.entries(node)) {
        const at = [...path, shown(name)];
        if (UNSTORABLE.test(name)) add(at.join("."), `the property name ${problemWith(name)}`);
        visit(child, at);
      }
    }
  };
  visit(value, []);
  return errors && Object.fromEntries(errors);
}

export const unstorableTextError = (errors: FieldErrors) =>
  new ApiError("VALIDATION_FAILED", "See errors for every problem found in the request.", { errors });

/**
 * Query strings: a NUL can only arrive as `%00` (a bad UTF-8 sequence decodes to U+FFFD), so
 * only a URL holding one is walked. Bodies are checked where they are parsed (src/http/json-body.ts,
 * the console's form parser).
 */
/** A repeated parameter is named once, not by the index of its repetition. */
const asOneValueEach = (query: unknown) =>
  query !== null && typeof query === "object" ? Object.fromEntries(Object.entries(query).map(([name, value]) => [name, Array.isArray(value) ? value.join("") : value])) : query;

export function refuseUnstorableQuery(app: FastifyInstance): void {
  // A callback hook: it runs on every request, and an async one costs a promise each.
  app.addHook("preValidation", (request, _reply, done) => {
    const errors = request.url.includes("%00") ? unstorableText(asOneValueEach(request.query)) : undefined;
    if (!errors) return done();
    done(unstorableTextError(errors));
  });
}
