/**
 * The spans the service starts itself (SPEC §17), through the OpenTelemetry API: no-ops while
 * tracing is off (tracing.ts). One trace per item: an item keeps the W3C `traceparent` of its
 * intake, and the bot's calls and the webhook deliveries about it are spans under it.
 *
 * Spans are handed on explicitly, never through an "active" context: on Node 20 the
 * AsyncLocalStorage behind an active context runs a hook on every promise in the process, and
 * that cost a traced add a quarter of its extra CPU (docs/performance.md). So a span goes where
 * it is needed as an argument: to the call that sends its `traceparent`, to the call that
 * describes its HTTP exchange, and to the spans that link to it.
 */
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";

const tracer = () => trace.getTracer("work-item-api");

/** The context a kept `traceparent` names: spans started in it are of the item's trace. */
function contextOf(traceParent: string | null | undefined): Context | undefined {
  if (!traceParent) return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** Adds the span's `traceparent` to outgoing headers; nothing without a span or while tracing is off. */
export function injectTraceParent(headers: Record<string, string>, span: Span | undefined): Record<string, string> {
  if (span) propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers);
  return headers;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The item's kept trace context: the span joins that trace. */
  traceParent?: string | null;
  /** The span that made this one (a bot pass): linked to when the span joins an item's trace, its parent otherwise. */
  madeBy?: Span;
}

/**
 * Runs `work` with a new span and ends it with work's outcome: an error is recorded and sets the
 * span's status, and is thrown on. With `traceParent`, the span is a child of the item's intake
 * and keeps a link to `madeBy` (the bot pass that made the call); without, a child of `madeBy`.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const itemContext = contextOf(options.traceParent);
  const madeBy = options.madeBy?.spanContext();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: itemContext && madeBy && trace.isSpanContextValid(madeBy) ? [{ context: madeBy }] : [] },
    itemContext ?? (options.madeBy ? trace.setSpan(ROOT_CONTEXT, options.madeBy) : ROOT_CONTEXT),
  );
  try {
    return await work(span);
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * An HTTP call's attributes on its (client) span, as the semantic conventions name them.
 * `withPath: false` leaves the URL out, for a target whose path or query may hold a token.
 */
export function describeHttpCall(span: Span | undefined, method: string, target: string, status: number, options: { withPath?: boolean } = {}): void {
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

export { SpanKind, type Span };
