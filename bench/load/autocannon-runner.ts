/**
 * The fallback load generator when wrk is not installed: autocannon in its own process (so it
 * can be pinned to its own core), driven by the same request spec as the wrk script.
 *   node --import tsx bench/load/autocannon-runner.ts <spec.json>
 * Prints one line: AUTOCANNON_RESULT {...}.
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import type { RequestTemplate } from "../lib/routes.ts";

interface RunnerSpec {
  url: string;
  connections: number;
  durationSeconds: number;
  requests: RequestTemplate[];
}

const spec = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as RunnerSpec;
let index = 0;
let serial = 0;
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationSeconds,
  timeout: 10,
  requests: [
    {
      setupRequest: (request) => {
        const template = spec.requests[index++ % spec.requests.length]!;
        const body = template.unique && template.body ? template.body.replace(template.unique, `a-${String(++serial).padStart(12, "0")}`) : template.body;
        return { ...request, method: template.method, path: template.path, headers: template.headers, ...(body === undefined ? {} : { body }) };
      },
    },
  ],
});
const ok200 = Number(result.statusCodeStats["200"]?.count ?? 0);
process.stdout.write(
  `AUTOCANNON_RESULT ${JSON.stringify({
    requests: result.requests.total,
    durationSeconds: result.duration,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    ok200,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, p999: result.latency.p99_9, max: result.latency.max, mean: result.latency.average },
  })}\n`,
);
