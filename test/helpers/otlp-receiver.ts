/**
 * An OTLP/HTTP traces receiver on 127.0.0.1, for the tracing tests: it takes what the service's
 * exporter posts to /v1/traces. OTLP/JSON is read into spans; an OTLP/protobuf body is kept as it
 * came, with its content type (no protobuf decoder is needed to find a trace id's 16 bytes in it).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { waitUntil } from "./waiting.ts";

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  /** service.name of the process that sent it, and its pid. */
  service: string;
  pid: number;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Bodies that were not JSON, with their content type. */
  rawBodies: Array<{ contentType: string; body: Buffer }>;
  waitForSpan(what: string, match: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

const SPAN_KIND = { SPAN_KIND_INTERNAL: 1, SPAN_KIND_SERVER: 2, SPAN_KIND_CLIENT: 3 } as Record<string, number>;

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? "";
}

const attributesOf = (list: Array<{ key: string; value: AnyValue }> = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rawBodies: Array<{ contentType: string; body: Buffer }> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers["content-type"] ?? "";
      if (request.url === "/v1/traces" && contentType.startsWith("application/json")) {
        const document = JSON.parse(body.toString("utf8")) as {
          resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: AnyValue }> }; scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
        };
        for (const resourceSpans of document.resourceSpans) {
          const resource = attributesOf(resourceSpans.resource.attributes);
          for (const scope of resourceSpans.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({
                traceId: String(span.traceId),
                spanId: String(span.spanId),
                parentSpanId: String(span.parentSpanId ?? ""),
                name: String(span.name),
                kind: typeof span.kind === "number" ? span.kind : (SPAN_KIND[String(span.kind)] ?? 0),
                attributes: attributesOf(span.attributes as Array<{ key: string; value: AnyValue }>),
                links: ((span.links ?? []) as Array<{ traceId: string; spanId: string }>).map(({ traceId, spanId }) => ({ traceId, spanId })),
                service: String(resource["service.name"] ?? ""),
                pid: Number(resource["process.pid"] ?? 0),
              });
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
        return;
      }
      rawBodies.push({ contentType, body });
      response.writeHead(200, { "content-type": contentType || "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rawBodies,
    waitForSpan: (what, match) => waitUntil(what, () => spans.find(match), undefined, 50),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A W3C traceparent of a new, sampled trace, as an integrator's own tracing would send it. */
export function newTraceParent(): { traceparent: string; traceId: string; spanId: string } {
  const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}
