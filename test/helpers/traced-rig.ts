/**
 * A traced service on a real store, for the tests of what it emits (SPEC §17, §22): the server
 * process (ROLE=all, or an api and a worker process) exporting every span to an OTLP receiver of
 * the test's, the simulated authority, a webhook receiver, and a company's key and bearer token.
 */
import { startAuthoritySim, type AuthoritySim } from "../../src/authority-sim/server.ts";
import { type Backend, type queryRows } from "./backends.ts";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.ts";
import { bearerTokenFrom, createKeyWithCli, startServer, stopAll, type ServerProcess } from "./processes.ts";
import { TEST_JWT_SECRET } from "./test-app.ts";
import { WEBHOOK_TEST_ENV } from "./webhook-harness.ts";
import { startReceiver, type Receiver } from "./webhook-receiver.ts";

export interface Rig {
  otlp: OtlpReceiver;
  sim: AuthoritySim;
  hooks: Receiver;
  api: ServerProcess;
  processes: ServerProcess[];
  /** The company's bearer token, for requests the rig's post does not make. */
  bearerToken: string;
  secrets: string[];
  location: Parameters<typeof queryRows>[0];
  post(path: string, body: unknown, traceparent?: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

export interface RigOptions {
  companyId: number;
  roles: "one" | "two";
  protocol: "http/json" | "http/protobuf";
  /** More of the processes' environment (LOG_LEVEL, say). */
  env?: Record<string, string>;
}

export async function withRig(backend: Backend, { companyId, roles, protocol, env: more = {} }: RigOptions, body: (rig: Rig) => Promise<void>): Promise<void> {
  const otlp = await startOtlpReceiver();
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, errorRate: 0, outage: false, latencyMs: 0, decisionDelayMs: 0 });
  const hooks = await startReceiver(() => 204);
  const db = await backend.create();
  try {
    const env = {
      DATABASE_URL: db.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      AUTHORITY_URL: sim.url,
      BOT_SCHEDULE: "* * * * * *",
      RATE_LIMIT_TENANT_RPS: "0",
      ...WEBHOOK_TEST_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_SERVICE_NAME: "work-item-api-under-test",
      ...more,
    };
    const key = await createKeyWithCli(db.databaseUrl, companyId);
    const processes = roles === "one" ? [await startServer({ ...env, ROLE: "all" })] : [await startServer({ ...env, ROLE: "api" }), await startServer({ ...env, ROLE: "worker" })];
    const api = processes[0]!;
    const bearerToken = await bearerTokenFrom(api.baseUrl, key);
    const post = async (path: string, payload: unknown, traceparent?: string) => {
      const response = await fetch(`${api.baseUrl}/api/AuthorityRvdm/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${bearerToken}`, "content-type": "application/json", ...(traceparent ? { traceparent } : {}) },
        body: JSON.stringify(payload),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    await body({ otlp, sim, hooks, api, processes, bearerToken, secrets: [key.secret, bearerToken, TEST_JWT_SECRET], location: db.location, post });
  } finally {
    await stopAll();
    await hooks.close();
    await sim.close();
    await otlp.close();
    await db.cleanup();
  }
}
