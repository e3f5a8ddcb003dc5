/**
 * The request span's `traceparent`, as an added item keeps it: what the W3C propagator would
 * write for that span, under an incoming `traceparent` and without one. And the ids handed on
 * for the request's log lines are that span's.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import Fastify from "fastify";
import { installRequestSpans, requestSpan, requestTraceParent } from "../../src/telemetry/request-span.ts";

const provider = new NodeTracerProvider();
provider.register();
after(() => provider.shutdown());

test("requestTraceParent is the propagator's traceparent for the request's span, whose ids the request's log gets", async () => {
  const app = Fastify();
  const logBindings = new Map<string, { trace_id: string; span_id: string }>();
  await installRequestSpans(app, (request, bindings) => logBindings.set(request.id, bindings));
  app.get("/probe", async (request) => {
    const carrier: Record<string, string> = {};
    const span = requestSpan(request)!;
    propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
    assert.deepEqual(logBindings.get(request.id), { trace_id: span.spanContext().traceId, span_id: span.spanContext().spanId });
    return { kept: requestTraceParent(request), propagated: carrier.traceparent };
  });
  try {
    const fresh = (await app.inject({ url: "/probe" })).json() as { kept: string; propagated: string };
    assert.match(fresh.kept, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    assert.equal(fresh.kept, fresh.propagated);

    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const joined = (await app.inject({ url: "/probe", headers: { traceparent: incoming } })).json() as { kept: string; propagated: string };
    assert.equal(joined.kept, joined.propagated);
    assert.equal(joined.kept.slice(3, 35), "4bf92f3577b34da6a3ce929d0e0e4736", "the incoming trace is kept");
    assert.notEqual(joined.kept.slice(36, 52), "00f067aa0ba902b7", "under a span of its own");
  } finally {
    await app.close();
  }
});
