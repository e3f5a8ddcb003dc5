/**
 * OpenTelemetry tracing (SPEC §17), off unless an OTLP endpoint is configured. When it is on, the
 * SDK's tracer provider is registered globally: the spans the rest of the code starts through
 * `@opentelemetry/api` (spans.ts, and @fastify/otel's request spans) are then recorded and
 * exported over OTLP/HTTP, in the protocol configured. When it is off, nothing of the SDK is
 * loaded, and those same calls are the API's no-ops.
 *
 * Propagation is W3C Trace Context (with baggage), the provider's default; the tracer provider
 * does not read OTEL_PROPAGATORS, which only the all-in-one SDK package does. No context manager
 * is registered: spans are handed on explicitly (spans.ts says why), so no AsyncLocalStorage
 * hooks every promise.
 *
 * The SDK reads the standard variables it defines itself (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and _ARG, OTEL_EXPORTER_OTLP_*_HEADERS and
 * _TIMEOUT, OTEL_BSP_*); config.ts checks the ones that decide whether and how.
 */

import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-node";
import { OtlpSpanEncoder } from "./otlp-encoding.ts";

/** How traces are exported when tracing is on (config.ts decides from the OTEL_* variables). */
export interface TracingSettings {
  protocol: "http/protobuf" | "http/json";
}

export interface Tracing {
  /** Exports the spans still buffered and stops; on shutdown. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { shutdown: async () => undefined };

/** The service's name when OTEL_SERVICE_NAME does not give one. */
const DEFAULT_SERVICE_NAME = "work-item-api";

export async function startTracing(settings: TracingSettings | undefined): Promise<Tracing> {
  if (settings === undefined) return OFF;
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources, exporter] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    settings.protocol === "http/json" ? jsonExporter() : protobufExporter(),
  ]);
  const resource = resources
    .resourceFromAttributes({ "service.name": DEFAULT_SERVICE_NAME })
    .merge(resources.detectResources({ detectors: [resources.envDetector, resources.processDetector, resources.hostDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register({ contextManager: null });
  return { shutdown: () => provider.shutdown() };
}

// Both exporters read their endpoint, headers and timeout from the OTEL_EXPORTER_OTLP_* variables.

async function jsonExporter(): Promise<SpanExporter> {
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  return new OTLPTraceExporter();
}

/**
 * The SDK's OTLP/HTTP exporter (transport, retries, headers, timeout, its own metrics) with the
 * protobuf encoder of otlp-encoding.ts in place of the stock serializer, which cost a third of a
 * traced request.
 */
async function protobufExporter(): Promise<SpanExporter> {
  const [{ OTLPExporterBase }, { createOtlpHttpExportDelegate, convertLegacyHttpOptions }, { ProtobufTraceSerializer, TraceExporterMetricsHelper }] = await Promise.all([
    import("@opentelemetry/otlp-exporter-base"),
    import("@opentelemetry/otlp-exporter-base/node-http"),
    import("@opentelemetry/otlp-transformer"),
  ]);
  const encoder = new OtlpSpanEncoder();
  const serializer = {
    serializeRequest: (spans: ReadableSpan[]) => encoder.encode(spans),
    deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data),
  };
  const options = convertLegacyHttpOptions({}, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, serializer, "otlp_http_span_exporter", TraceExporterMetricsHelper, undefined));
}
