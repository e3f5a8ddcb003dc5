/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`
 * keys), behind two checks it does not make. A body must be valid UTF-8 (RFC 8259 §8.1):
 * otherwise the decoder would quietly turn bad bytes into U+FFFD and we would store text the
 * client never sent. A declared charset other than UTF-8 is refused with 415 rather than
 * misread. And text neither store can hold is refused with 400 (src/http/storable-text.ts).
 */
import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.ts";
import { refusalOfBody, unstorableText } from "./storable-text.ts";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/**
 * Our deepest body (a bulk add's translation object) is 4 levels. Everything that walks a body
 * afterwards (validation, the idempotency hash, serialisation) may recurse, so a body is refused
 * before any of it runs rather than each walker made iterative.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/** One pass over the bytes, brackets inside strings not counted; no UTF-8 continuation byte is one of these. */
function nestsDeeperThan(bytes: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index]!;
    if (inString) {
      if (byte === BACKSLASH) index += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (OPENERS.has(byte)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSERS.has(byte)) depth -= 1;
  }
  return false;
}
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;

export function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      done(new ApiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json in UTF-8."), undefined);
      return;
    }
    const bytes = body as Buffer;
    // Many clients send Content-Type: application/json on every request; a body-less DELETE or
    // GET with that header is not a malformed request, nor a POST to a route that takes no body.
    if (bytes.length === 0 && (!METHODS_WITH_BODY.has(request.method) || request.routeOptions.schema?.body === undefined)) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new ApiError("MALFORMED_REQUEST", "The body is not valid UTF-8."), undefined);
      return;
    }
    if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
      done(new ApiError("MALFORMED_REQUEST", `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`), undefined);
      return;
    }
    const text = bytes.toString("utf8");
    // In JSON text U+0000 and a lone surrogate can only be written as a \u escape: a raw NUL is
    // not valid JSON, and a raw surrogate is not valid UTF-8. Without one, nothing is walked.
    if (!text.includes("\\u")) return parseJson(request, text, done);
    parseJson(request, text, (error, value) => {
      const errors = error ? undefined : unstorableText(value);
      const refusal = errors && refusalOfBody(request, errors);
      if (refusal) done(refusal, undefined);
      else done(error, value);
    });
  });
}
