/**
 * One completion log line and one histogram observation per request. Both use the route
 * pattern (`/api/AuthorityRvdm/WorkItem/:workItemId`), never the raw URL, so ids do not explode
 * label cardinality and logs group by operation. The log line carries the request id (`reqId`,
 * the same value as the problem details' `traceId`) through Fastify's child logger, and the
 * tenant once the bearer guard has named it (on the operator API, the operator's id). Headers and
 * bodies are never logged here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import type { Tenant } from "../auth/guard.ts";
import type { Metrics } from "../metrics.ts";

/** Label for requests that matched no route (404s, 405s), so scanners cannot add label values. */
export const UNMATCHED_ROUTE = "unmatched";

export function routePattern(request: FastifyRequest): string {
  return request.routeOptions.url ?? UNMATCHED_ROUTE;
}

/** pino can tell whether a level is on; assume so for other loggers. */
type LevelAware = { isLevelEnabled?(level: string): boolean };

export function installRequestObservation(app: FastifyInstance, metrics: Metrics): void {
  // A callback hook, and the log object built only when info is on: at the production level
  // (warn) this runs for every request and writes nothing.
  app.addHook("onResponse", (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const route = routePattern(request);
    const durationMs = reply.elapsedTime;
    metrics.httpRequestDuration.observe(request.method, route, reply.statusCode, durationMs / 1000);
    if ((request.log as LevelAware).isLevelEnabled?.("info") ?? true) {
      const tenant = (request as { tenant?: Tenant }).tenant;
      const operator = (request as { operator?: { operatorId: string } }).operator;
      request.log.info(
        {
          method: request.method,
          route,
          statusCode: reply.statusCode,
          durationMs: Math.round(durationMs * 100) / 100,
          ...(tenant ? { companyId: tenant.companyId } : {}),
          ...(operator ? { operatorId: operator.operatorId } : {}),
        },
        "request completed",
      );
    }
    done();
  });
}
