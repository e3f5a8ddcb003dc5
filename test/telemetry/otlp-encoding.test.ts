/**
 * The exporter's protobuf encoding (src/telemetry/otlp-encoding.ts) against the SDK's own
 * serializer: for spans of every shape the SDK records, the same bytes. Spans are made by a real
 * tracer provider, as the service makes them.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { context, createTraceState, SpanKind, SpanStatusCode, trace, TraceFlags, type Link, type Tracer } from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-node";
import { OtlpSpanEncoder } from "../../src/telemetry/otlp-encoding.ts";

/** A tracer provider whose finished spans are kept in `spans`; not registered globally. */
function recordingProvider(serviceName: string, spans: ReadableSpan[], spanLimits = {}): NodeTracerProvider {
  const keep: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => void spans.push(span),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  return new NodeTracerProvider({ resource: resourceFromAttributes({ "service.name": serviceName, "host.name": "hôte-1", pid: 4242 }), spanProcessors: [keep], spanLimits });
}

function assertSameBytes(spans: ReadableSpan[], encoder = new OtlpSpanEncoder()): Uint8Array {
  const expected = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);
  const actual = Buffer.from(encoder.encode(spans));
  if (!actual.equals(expected)) {
    const at = actual.findIndex((byte, i) => byte !== expected[i]);
    assert.fail(`${actual.length} bytes against the serializer's ${expected.length}; first difference at byte ${at}`);
  }
  return actual;
}

const REMOTE_PARENT = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
};

function requestSpan(tracer: Tracer, i: number): void {
  const span = tracer.startSpan("POST /api/v1/work-items", {
    kind: SpanKind.SERVER,
    attributes: { "fastify.root": "@fastify/otel", "http.request.method": "POST", "url.path": `/api/v1/work-items/${i}`, "http.route": "/api/v1/work-items" },
  });
  span.setAttribute("work_item_api.company_id", 1701);
  span.setAttribute("http.response.status_code", 200);
  span.end();
}

test("request spans, as intake makes them: the same bytes as the SDK's serializer", () => {
  const spans: ReadableSpan[] = [];
  const tracer = recordingProvider("work-item-api", spans).getTracer("@fastify/otel", "0.21.2");
  for (let i = 0; i < 600; i++) requestSpan(tracer, i);
  // 600 spans: the resource's and the scope's lengths need three bytes each.
  const bytes = assertSameBytes(spans);
  assert.ok(bytes.length > 0x4000, `${bytes.length} bytes`);
});

test("every kind of attribute value, events, links, a remote parent, trace state and an error status", () => {
  const spans: ReadableSpan[] = [];
  const provider = recordingProvider("work-item-api", spans);
  const tracer = provider.getTracer("work-item-api", "1.4.0");
  const remote = trace.setSpanContext(context.active(), { ...REMOTE_PARENT, traceState: createTraceState("vendor=a,other=b") });
  const link: Link = { context: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.NONE }, attributes: { "link.reason": "bot pass" } };
  const span = tracer.startSpan("submit", { kind: SpanKind.CLIENT, links: [link, { context: { ...REMOTE_PARENT, traceFlags: TraceFlags.SAMPLED } }] }, remote);
  span.setAttributes({
    ascii: "plain",
    accents: "Zürich, Öresund, façade",
    emoji: "tractor 🚜 and manure 💩",
    long: "x".repeat(300),
    longer: "é".repeat(20_000),
    empty: "",
    yes: true,
    no: false,
    zero: 0,
    count: 1701,
    negative: -42,
    big: 2 ** 53,
    huge: 2 ** 62,
    fraction: 0.25,
    negativeFraction: -1.5e-7,
    strings: ["a", "ß", ""],
    numbers: [1, -2, 3.5],
    flags: [true, false],
    holes: ["a", null, undefined, "b"] as string[],
  });
  span.addEvent("retry", { attempt: 2, "error.type": "timeout" });
  span.addEvent("plain");
  span.recordException(new Error("Authority said no: ünlüm"));
  span.setStatus({ code: SpanStatusCode.ERROR, message: "refused" });
  span.end();
  const bare = tracer.startSpan("no status message", { kind: SpanKind.INTERNAL });
  bare.setStatus({ code: SpanStatusCode.OK });
  bare.end();
  const localParent = trace.setSpanContext(context.active(), { ...REMOTE_PARENT, isRemote: false });
  tracer.startSpan("local parent", {}, localParent).end();
  assert.equal(spans.length, 3);
  assert.equal(spans[0]!.spanContext().traceState?.serialize(), "vendor=a,other=b");
  assertSameBytes(spans);
});

test("several resources and scopes, dropped attributes, events and links, and a reused encoder", () => {
  const spans: ReadableSpan[] = [];
  const limits = { attributeCountLimit: 2, eventCountLimit: 1, linkCountLimit: 1 };
  const first = recordingProvider("work-item-api", spans, limits);
  const second = recordingProvider("work-item-worker", spans);
  const link = (n: number): Link => ({ context: { traceId: `${n}`.padStart(32, "a"), spanId: `${n}`.padStart(16, "b"), traceFlags: TraceFlags.SAMPLED } });
  for (const [provider, scope] of [[first, "bot"], [second, "webhooks"], [first, "webhooks"], [second, "bot"]] as const) {
    const tracer = provider.getTracer(scope, scope === "bot" ? "2.0.0" : undefined);
    const span = tracer.startSpan(`${scope} pass`, { attributes: { a: 1, b: 2, c: 3, d: 4 }, links: [link(1), link(2), link(3)] });
    span.addEvent("one");
    span.addEvent("two");
    span.end();
  }
  const encoder = new OtlpSpanEncoder();
  assertSameBytes(spans, encoder);
  // The encoder keeps its buffer between batches; a second batch is encoded from a clean start.
  assertSameBytes(spans.slice(1), encoder);
  assertSameBytes([], encoder);
});
