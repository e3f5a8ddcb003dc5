/**
 * The HTTP server's defences against slow and oversized clients, and the answers it gives
 * before a request ever reaches a route.
 *
 * - A client has HEADERS_TIMEOUT_MS to send its headers and REQUEST_TIMEOUT_MS for the whole
 *   request (slowloris); Node checks both every `connectionsCheckingInterval`.
 * - An idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS, set above the usual
 *   load-balancer idle timeout (60 s) so the balancer, not us, closes first.
 * - A socket that carries no bytes at all for CONNECTION_TIMEOUT_MS is closed.
 * - Router and parser errors (malformed HTTP, bad percent-encoding, a head too large, a
 *   timeout) are answered as problem+json like every other error.
 * - The request head may be MAX_HEADER_BYTES (default 128 KiB, Node's own is 16 KiB), so that
 *   an absurd Authorization header reaches the bearer guard and gets a proper 401 problem
 *   instead of a bare 431 from the parser; heads beyond that get a 431 problem.
 * - The body limit is checked against Content-Length before a byte of the body is read, and
 *   counted while a chunked body streams in (Fastify's bodyLimit).
 * - During shutdown, requests that still arrive on open connections get a 503 problem with
 *   `Connection: close` instead of Fastify's plain JSON, and in-flight ones are answered with
 *   `Connection: close`.
 */
import { randomUUID } from "node:crypto";
import { STATUS_CODES, type Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyHttpOptions, FastifyInstance } from "fastify";
import type { Config } from "../config.ts";
import { ApiError, errorCatalogue, problemTypeFor, sendProblem, type ErrorCode } from "../errors.ts";

export function serverOptions(config: Config): FastifyHttpOptions<Server> {
  return {
    bodyLimit: config.maxBodyBytes,
    trustProxy: config.trustProxy,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    http: {
      maxHeaderSize: config.maxHeaderBytes,
      headersTimeout: config.headersTimeoutMs,
      // Node enforces the two timeouts above only when it sweeps, every 30 s by default.
      connectionsCheckingInterval: Math.max(250, Math.min(5000, Math.floor(config.headersTimeoutMs / 4))),
    },
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // Errors of the router itself (bad percent-encoding, an over-long path parameter).
    frameworkErrors: (error, _request, reply) =>
      sendProblem(
        reply,
        error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? new ApiError("URI_TOO_LONG", "A path parameter is too long.")
          : new ApiError("MALFORMED_REQUEST", "The URL is not valid (bad percent-encoding)."),
      ),
  };
}

/** Refuses requests that arrive while the server drains (see src/shutdown.ts). */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Callback hooks: they run on every request and response, and an async hook costs a promise each.
  app.addHook("onRequest", (_request, reply, done) => {
    if (!closing) return done();
    reply.header("connection", "close");
    done(new ApiError("SHUTTING_DOWN", "This instance is shutting down; retry, and another will answer.", { headers: { "retry-after": "1" } }));
  });
  // Requests that were already in flight finish normally, but tell their clients not to reuse
  // a connection that is about to go away.
  app.addHook("onSend", (_request, reply, payload, done) => {
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
}

/** Errors Node's parser raises before Fastify has a request, answered as problem+json. */
function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const [code, detail] = describeClientError(error.code);
  const { status, title } = errorCatalogue[code];
  const traceId = randomUUID();
  const body = JSON.stringify({ type: problemTypeFor(code), title, status, detail, instance: `urn:uuid:${traceId}`, traceId });
  this.log.debug({ code: error.code, traceId }, "client error before routing");
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function describeClientError(code: string | undefined): [ErrorCode, string] {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["REQUEST_TIMEOUT", "The request was not received in time."];
    case "HPE_HEADER_OVERFLOW":
      return ["HEADERS_TOO_LARGE", "The request headers are too large."];
    default:
      return ["MALFORMED_REQUEST", "The request is not valid HTTP/1.1."];
  }
}
