/**
 * `npm run bench:otlp-encoding -- [--spans N] [--rounds N]`: what encoding a batch of spans for
 * export costs, the SDK's protobuf serializer (@opentelemetry/otlp-transformer) beside the
 * encoder the service exports with (src/telemetry/otlp-encoding.ts), in alternating rounds of
 * one run. The spans are request spans as the service records them: a real tracer provider,
 * @fastify/otel's attributes, the company and the status.
 *
 * Prints µs per span for each (the median over the rounds), the ratio, and that both wrote the
 * same bytes; exits non-zero when they did not.
 */
import { parseArgs } from "node:util";
import { SpanKind } from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { OtlpSpanEncoder } from "../src/telemetry/otlp-encoding.ts";

const { values } = parseArgs({ options: { spans: { type: "string", default: "512" /* the batch processor's default export batch */ }, rounds: { type: "string", default: "7" } } });
const spanCount = Number(values.spans);
const rounds = Number(values.rounds);
if (!Number.isInteger(spanCount) || spanCount < 1) throw new Error(`--spans must be a whole number ≥ 1, got ${values.spans}`);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a whole number ≥ 1, got ${values.rounds}`);


const spans: ReadableSpan[] = [];
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "work-item-api", "host.name": "bench", "process.pid": process.pid }),
  spanProcessors: [{ onStart: () => undefined, onEnd: (span) => void spans.push(span), forceFlush: async () => undefined, shutdown: async () => undefined }],
});
const tracer = provider.getTracer("@fastify/otel", "0.21.2");
for (let i = 0; i < spanCount; i++) {
  const span = tracer.startSpan("POST /api/v1/work-items", {
    kind: SpanKind.SERVER,
    attributes: { "fastify.root": "@fastify/otel", "http.request.method": "POST", "url.path": "/api/v1/work-items", "http.route": "/api/v1/work-items" },
  });
  span.setAttribute("work_item_api.company_id", 1701 + (i % 10));
  span.setAttribute("http.response.status_code", 200);
  span.end();
}

const encoder = new OtlpSpanEncoder();
const contenders = {
  "SDK serializer": () => ProtobufTraceSerializer.serializeRequest(spans)!,
  "our encoder": () => encoder.encode(spans),
};
const same = Buffer.from(contenders["SDK serializer"]()).equals(Buffer.from(contenders["our encoder"]()));

/** Enough batches per round for about 200 ms of the SDK's work on a quiet machine. */
const batchesPerRound = Math.max(20, Math.round(100_000 / spanCount));
for (const encode of Object.values(contenders)) for (let i = 0; i < batchesPerRound; i++) encode();
const perSpan: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
for (let round = 1; round <= rounds; round++) {
  for (const [name, encode] of Object.entries(contenders)) {
    const started = performance.now();
    for (let i = 0; i < batchesPerRound; i++) encode();
    perSpan[name]!.push(((performance.now() - started) * 1000) / (batchesPerRound * spanCount));
  }
  process.stderr.write(`round ${round}/${rounds}\n`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sdk = median(perSpan["SDK serializer"]!);
const ours = median(perSpan["our encoder"]!);
console.log(`${spanCount} request spans a batch, ${rounds} alternating rounds of ${batchesPerRound} batches, median µs per span:`);
console.log(`  SDK serializer  ${sdk.toFixed(2)}`);
console.log(`  our encoder     ${ours.toFixed(2)}  (${(sdk / ours).toFixed(2)}× faster)`);
console.log(`  same bytes: ${same ? "yes" : "NO"}`);
process.exitCode = same ? 0 : 1;
