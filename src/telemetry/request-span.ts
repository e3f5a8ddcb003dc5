/**
 * Each request's server span, as @fastify/otel makes it (SPEC §17): named by method and route
 * pattern, with the company once the bearer guard knows it. The health, readiness and metrics
 * routes are left out: a scraper would fill every trace store with them.
 */
import type { Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";

const UNTRACED_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

/** The attribute that names the tenant on a request's span. */
const COMPANY_ATTRIBUTE = "work_item_api.company_id";

/**
 * Registers the request spans; before any route, so that every route is covered. `spanStarted`
 * gets each span's ids as its request's log bindings (SPEC §17); the logger is not this room's.
 */
export async function installRequestSpans(app: FastifyInstance, spanStarted: (request: FastifyRequest, logBindings: { trace_id: string; span_id: string }) => void): Promise<void> {
  // Loaded only when tracing is on.
  const { FastifyOtelInstrumentation } = await import("@fastify/otel");
  const instrumentation = new FastifyOtelInstrumentation({
    // One span per request: a span per hook would cost more than the request itself.
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: (route: { url: string }) => UNTRACED_ROUTES.has(route.url),
    requestHook: (span: Span, request: FastifyRequest) => {
      span.updateName(`${request.method} ${request.routeOptions.url ?? "unmatched"}`);
      // The instrumentation records the whole URL as url.path; the query is no part of a path (and stays out of traces).
      const query = request.url.indexOf("?");
      if (query >= 0) span.setAttribute("url.path", request.url.slice(0, query));
      const { traceId, spanId } = span.spanContext();
      spanStarted(request, { trace_id: traceId, span_id: spanId });
    },
  });
  await app.register(instrumentation.plugin());
  app.addHook("preHandler", (request, _reply, done) => {
    const tenant = (request as { tenant?: { companyId: number } }).tenant;
    if (tenant) requestSpan(request)?.setAttribute(COMPANY_ATTRIBUTE, tenant.companyId);
    done();
  });
}

/** The request's span; undefined while tracing is off, or for an untraced route. */
export function requestSpan(request: FastifyRequest): Span | undefined {
  const telemetry = (request as { opentelemetry?: () => { span: Span | null } }).opentelemetry;
  return telemetry?.call(request).span ?? undefined;
}

/**
 * The W3C `traceparent` of the request's span: an item added by the request keeps it. Written out
 * here (version 00: trace id, span id, flags) rather than by the propagator, which would build a
 * context and a carrier for it on every add.
 */
export function requestTraceParent(request: FastifyRequest): string | null {
  const spanContext = requestSpan(request)?.spanContext();
  if (!spanContext) return null;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${spanContext.traceFlags.toString(16).padStart(2, "0")}`;
}

/** The request's trace id (32 hex digits) while tracing is on. */
export function requestTraceId(request: FastifyRequest): string | undefined {
  return requestSpan(request)?.spanContext().traceId;
}
