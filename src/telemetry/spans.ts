/**
 * The spans the service starts itself (SPEC §17), through the OpenTelemetry API: no-ops while
 * tracing is off (tracing.ts). One trace per item: an item keeps the W3C `traceparent` of its
 * intake, and the bot's calls and the webhook deliveries about it are spans under it.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";

const tracer = () => trace.getTracer("work-item-api");

/** The context a kept `traceparent` names: spans started in it are of the item's trace. */
function contextOf(traceParent: string | null | undefined): Context | undefined {
  if (!traceParent) return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** Adds the active span's `traceparent` to outgoing headers; nothing while tracing is off. */
export function injectTraceParent(headers: Record<string, string>): Record<string, string> {
  propagation.inject(context.active(), headers);
  return headers;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The item's kept trace context: the span joins that trace, and links to the active span (a bot pass). */
  traceParent?: string | null;
}

/**
 * Runs `work` inside a new span and ends it with work's outcome: an error is recorded and sets
 * the span's status, and is thrown on. With `traceParent`, the span is a child of the item's
 * intake and keeps a link to the span that was active (the bot pass that made the call).
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const itemContext = contextOf(options.traceParent);
  const active = trace.getSpanContext(context.active());
  const parent = itemContext ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: itemContext && active ? [{ context: active }] : [] },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** For a log line: the active span's `trace_id` and `span_id`, or nothing outside a span. */
export function activeSpanIds(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && trace.isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/**
 * An HTTP call's attributes on the active (client) span, as the semantic conventions name them.
 * `withPath: false` leaves the URL out, for a target whose path or query may hold a token.
 */
export function describeHttpCall(method: string, target: string, status: number, options: { withPath?: boolean } = {}): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  const url = new URL(target);
  span.setAttributes({
    "http.request.method": method,
    // Never a query, nor credentials in the URL's user part.
    ...(options.withPath === false ? {} : { "url.full": `${url.protocol}//${url.host}${url.pathname}` }),
    "server.address": url.hostname,
    "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
    "http.response.status_code": status,
  });
}

export { SpanKind };
