/**
 * `Cache-Control: no-store` on every answer of a scope: what operators see (other companies'
 * items, tokens in forms) must not stay in a browser's or a proxy's cache after sign-out. A
 * route may still set its own (the console's static assets do).
 */
import type { FastifyInstance } from "fastify";

export function answerNoStore(scope: FastifyInstance): void {
  // Set before the guard runs, so its 401s and redirects are not cached either.
  scope.addHook("onRequest", (_request, reply, done) => {
    reply.header("cache-control", "no-store");
    done();
  });
}
