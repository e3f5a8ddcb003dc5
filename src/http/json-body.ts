/**
 * The JSON body parser: Fastify's own (which refuses `__proto__` and `constructor.prototype`
 * keys), behind two checks it does not make. A body must be valid UTF-8 (RFC 8259 §8.1):
 * otherwise the decoder would quietly turn bad bytes into U+FFFD and we would store text the
 * client never sent. And a declared charset other than UTF-8 is refused with 415 rather than
 * misread.
 */
import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.ts";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);
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
    parseJson(request, bytes.toString("utf8"), done);
  });
}
